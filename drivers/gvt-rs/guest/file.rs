// SPDX-License-Identifier: GPL-2.0

//! `/dev/gvtgpuN` and its ioctls.
//!
//! The ABI is defined in C in
//! `tools/testing/selftests/drivers/gvt_rs/gvt_rs_guest.h`; every structure
//! there has fields of one type only, so that it is read and written here
//! as an array of that type, with the same layout for 32-bit and 64-bit
//! callers.

use crate::{
    device::{
        Gpu,
        Work, //
    },
    regs::{
        DESC_WORDS,
        MAX_ENGINES, //
    }, //
};
use kernel::{
    fs::{
        file,
        File, //
    },
    ioctl::{
        _IO,
        _IOR,
        _IOWR, //
    },
    miscdevice::{
        MiscDevice,
        MiscDeviceRegistration, //
    },
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    uaccess::UserSlice, //
};

/// `GVT_GPU_IOC_MAGIC`, `'G'`.
const IOC_MAGIC: u32 = 0x47;

/// `struct gvt_gpu_info`.
type InfoArg = [u32; 8];
/// `struct gvt_gpu_submit`.
type SubmitArg = [u32; 6];
/// `struct gvt_gpu_wait`.
type WaitArg = [u32; 4];
/// `struct gvt_gpu_stats`: four words, then four per engine.
type StatsArg = [u64; 4 + 4 * MAX_ENGINES];
/// `struct gvt_gpu_submit_raw`: engine and seqno, then the descriptor.
type SubmitRawHead = [u32; 2];
/// The descriptor of `struct gvt_gpu_submit_raw`, as in memory.
type SubmitRawDesc = [u64; DESC_WORDS];
/// `struct gvt_gpu_copy`: source, destination, length, engine, duration,
/// timeout, then seqno and result (out).
type CopyArg = [u64; 8];

const IOC_INFO: u32 = _IOR::<InfoArg>(IOC_MAGIC, 0xa0);
const IOC_SUBMIT: u32 = _IOWR::<SubmitArg>(IOC_MAGIC, 0xa1);
const IOC_WAIT: u32 = _IOWR::<WaitArg>(IOC_MAGIC, 0xa2);
const IOC_STATS: u32 = _IOR::<StatsArg>(IOC_MAGIC, 0xa3);
const IOC_RESET: u32 = _IO(IOC_MAGIC, 0xa4);
// `struct gvt_gpu_submit_raw` is 40 bytes, a head and a descriptor.
const IOC_SUBMIT_RAW: u32 = _IOWR::<[u64; 1 + DESC_WORDS]>(IOC_MAGIC, 0xa5);
const IOC_COPY: u32 = _IOWR::<CopyArg>(IOC_MAGIC, 0xa6);

/// `GVT_GPU_INFO_UNCHECKED`.
const INFO_UNCHECKED: u32 = 1 << 0;

/// Whether `SUBMIT_RAW` is allowed (the `unchecked_submit` parameter).
fn unchecked_submit() -> bool {
    crate::module_parameters::unchecked_submit.value()
}

#[vtable]
impl MiscDevice for Gpu {
    type Ptr = Arc<Gpu>;

    fn open(_file: &File, misc: &MiscDeviceRegistration<Self>) -> Result<Arc<Gpu>> {
        crate::driver::lookup(misc.device().name()).ok_or(ENODEV)
    }

    fn ioctl(gpu: ArcBorrow<'_, Gpu>, file: &File, cmd: u32, arg: usize) -> Result<isize> {
        let user = UserSlice::new(UserPtr::from_addr(arg), kernel::ioctl::_IOC_SIZE(cmd));
        let nonblock = file.flags() & file::flags::O_NONBLOCK != 0;
        // After removal every ioctl fails with `ENODEV`.
        gpu.check_present()?;
        match cmd {
            IOC_INFO => {
                let info = gpu.info;
                let flags = if unchecked_submit() {
                    INFO_UNCHECKED
                } else {
                    0
                };
                let out: InfoArg = [
                    // CAST: at most `MAX_ENGINES`.
                    info.engines as u32,
                    info.vgpu_id,
                    info.ring_size,
                    info.max_duration_us,
                    info.gm_low_mb,
                    info.gm_high_mb,
                    gpu.irq_kind().uapi(),
                    flags,
                ];
                user.writer().write(&out)?;
            }
            IOC_SUBMIT => {
                let (mut reader, mut writer) = user.reader_writer();
                let mut req: SubmitArg = reader.read()?;
                if req[5] != 0 {
                    return Err(EINVAL);
                }
                let work = Work::Exec {
                    duration_us: req[1],
                    bytes: req[2],
                    flags: req[3],
                };
                req[4] = gpu.submit(req[0], work, nonblock)?;
                writer.write(&req)?;
            }
            IOC_WAIT => {
                let (mut reader, mut writer) = user.reader_writer();
                let mut req: WaitArg = reader.read()?;
                req[3] = gpu.wait(req[0], req[1], req[2])?;
                writer.write(&req)?;
            }
            IOC_STATS => {
                let stats = gpu.stats()?;
                let mut out: StatsArg = [0; 4 + 4 * MAX_ENGINES];
                // CAST: at most `MAX_ENGINES`.
                out[0] = gpu.info.engines as u64;
                out[1] = u64::from(stats.failed);
                out[2] = u64::from(stats.fault);
                for (e, eng) in stats.engines.iter().enumerate().take(gpu.info.engines) {
                    let words = &mut out[4 + 4 * e..8 + 4 * e];
                    words[0] = u64::from(eng.status.completed);
                    words[1] = eng.status.gpu_ns;
                    words[2] = u64::from(eng.status.seqno);
                    words[3] = u64::from(eng.last_seqno);
                }
                user.writer().write(&out)?;
            }
            IOC_RESET => gpu.reset()?,
            IOC_SUBMIT_RAW => {
                if !unchecked_submit() {
                    return Err(EPERM);
                }
                let (mut reader, mut writer) = user.reader_writer();
                let mut head: SubmitRawHead = reader.read()?;
                let desc: SubmitRawDesc = reader.read()?;
                head[1] = gpu.submit(head[0], Work::Raw(&desc), nonblock)?;
                writer.write(&head)?;
            }
            IOC_COPY => {
                let (mut reader, mut writer) = user.reader_writer();
                let mut req: CopyArg = reader.read()?;
                if req[6] != 0 || req[7] != 0 {
                    return Err(EINVAL);
                }
                let len = usize::try_from(req[2])?;
                let (engine, duration, timeout) = (
                    u32::try_from(req[3])?,
                    u32::try_from(req[4])?,
                    u32::try_from(req[5])?,
                );
                if len == 0 || len > gpu.info.copy_max as usize {
                    return Err(EINVAL);
                }
                let src_ptr = UserPtr::from_addr(usize::try_from(req[0])?);
                let dst_ptr = UserPtr::from_addr(usize::try_from(req[1])?);
                let mut src = KVec::from_elem(0u8, len, GFP_KERNEL)?;
                UserSlice::new(src_ptr, len).reader().read_slice(&mut src)?;
                let mut dst = KVec::from_elem(0u8, len, GFP_KERNEL)?;
                UserSlice::new(dst_ptr, len).reader().read_slice(&mut dst)?;
                let (seqno, done) = gpu.copy(engine, duration, &src, &mut dst, timeout)?;
                req[6] = u64::from(seqno);
                match done {
                    Ok(()) => UserSlice::new(dst_ptr, len).writer().write_slice(&dst)?,
                    // The negative errno, as the ABI's 64-bit word.
                    Err(e) => req[7] = i64::from(e.to_errno()) as u64,
                }
                writer.write(&req)?;
            }
            _ => return Err(ENOTTY),
        }
        Ok(0)
    }
}
