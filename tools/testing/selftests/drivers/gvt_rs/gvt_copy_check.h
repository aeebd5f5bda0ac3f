/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data of the copy tests, shared by gvt_guest (through VFIO) and
 * gvt_gpu_client (through the guest driver): each copy's source is a
 * pattern of its own, from a per-run nonce and the copy's number, and a
 * completed copy is right when its destination has the source's checksum
 * and bytes.
 */
#ifndef GVT_COPY_CHECK_H
#define GVT_COPY_CHECK_H

#include <stdint.h>
#include <string.h>

/* A 64-bit mix (the MurmurHash3 finaliser): one step of the pattern. */
static inline uint64_t gvt_copy_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Fills len bytes of buf with the pattern of copy number seqno. */
static inline void gvt_copy_fill(uint8_t *buf, uint64_t len, uint32_t nonce, uint32_t seqno)
{
	uint64_t x = gvt_copy_mix64((uint64_t)nonce << 32 | seqno);

	for (uint64_t at = 0; at < len; at += 8) {
		uint64_t n = len - at < 8 ? len - at : 8;

		x = gvt_copy_mix64(x + 0x9e3779b97f4a7c15ull);
		memcpy(buf + at, &x, n);
	}
}

/* FNV-1a over 64-bit words, and the length. */
static inline uint64_t gvt_copy_checksum(const uint8_t *buf, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t at = 0; at < len; at += 8) {
		uint64_t w = 0;

		memcpy(&w, buf + at, len - at < 8 ? len - at : 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h ^ len;
}

#endif /* GVT_COPY_CHECK_H */
