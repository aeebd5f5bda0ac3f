#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parse the serial log of a gvt-rs test VM run and decide pass/fail.

The run fails on:
  * a selftest that fails, exits non-zero, is skipped, is missing from the
    run, prints fewer results than its plan, or ran into the runner's
    timeout (scripts/vm/run-tests.sh prints @@GVT_RS_TEST_TIMEOUT);
  * a KUnit suite that fails, or an expected suite (every `kunit_tests(NAME)`
    in the sources) that did not run;
  * any kernel WARN, BUG, Oops, panic, lockdep or kmemleak report;
  * a VM that did not reach its end marker (crash or timeout).

A selftest may declare the build flavour it needs with a line
"# gvt-rs-flavour: NAME" in its source (for example gvt_rs_i915.sh needs
the i915 flavour, the only one with i915.ko and kvmgt.ko). In any other
flavour that test may skip entirely (KTAP "1..0 # SKIP", exit 4) without
failing the run; in its own flavour, and for every other test, a skip is
a failure.

The last line of the report counts results for CI, "vm: N passed, M
failed": N is the passing selftest results plus the passing KUnit cases
(each (suite, case) once, however often the module was loaded; a suite
without case results counts as one); M is the
failing results and cases plus one for each other problem (a selftest that
crashed, skipped or lost results, a missing suite or test, a kernel warning,
...), so M > 0 exactly when the run fails. With --counts-file (default: the
file named by $GVT_RS_COUNTS, as set by scripts/check.sh) the line
"vm N M" is also appended to that file.

Usage: vm_results.py LOG --expect-kunit-from DIR... --expect-tests NAME...
       [--flavour NAME --tests-dir DIR] [--counts-file FILE]
"""

import argparse
import os
import re
import signal
import sys

KERNEL_ERRORS = [
    (r"WARNING: .* at ", "kernel WARN"),
    (r"------------\[ cut here \]------------", "kernel WARN/BUG"),
    (r"\bBUG: ", "kernel BUG"),
    (r"kernel BUG at", "kernel BUG"),
    (r"\bOops\b", "kernel Oops"),
    (r"Kernel panic", "kernel panic"),
    (r"general protection fault", "general protection fault"),
    (r"possible circular locking dependency", "lockdep"),
    (r"possible recursive locking", "lockdep"),
    (r"inconsistent lock state", "lockdep"),
    (r"lock held when returning to user space", "lockdep"),
    (r"suspicious RCU usage", "lockdep (RCU)"),
    (r"INFO: lockdep is turned off", "lockdep turned off"),
    (r"sleeping function called from invalid context", "DEBUG_ATOMIC_SLEEP"),
    (r"scheduling while atomic", "scheduling while atomic"),
    (r"rust_panic|panicked at", "Rust panic"),
    (r"UBSAN:", "UBSAN"),
    (r"KASAN: ", "KASAN"),
    (r"ODEBUG: ", "debug objects"),
    (r"hung_task|blocked for more than", "hung task"),
    (r"kmemleak: \d+ new suspected memory leaks", "kmemleak"),
    (r"unreferenced object 0x", "kmemleak"),
]

RESULT_RE = re.compile(r"^\s*(not ok|ok) (\d+)\s*-?\s*(.*)$")
PLAN_RE = re.compile(r"^\s*1\.\.(\d+)")


TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")


def strip(line):
    # Serial lines may carry a printk timestamp and a CR.
    line = line.rstrip("\r\n")
    return TIMESTAMP_RE.sub("", line)


def kernel_console(raw):
    """The console lines the kernel printed: marker lines and the selftests'
    own output (whose TAP lines look like KUnit's) left out, but timestamped
    kernel lines printed while a selftest ran kept."""
    out, in_test = [], False
    for r in raw:
        l = strip(r)
        if l.startswith("@@GVT_RS_TEST_BEGIN"):
            in_test = True
        elif l.startswith("@@GVT_RS_TEST_END"):
            in_test = False
        elif not l.startswith("@@") and (not in_test or TIMESTAMP_RE.match(r)):
            out.append(r)
    return out


def section(lines, begin, end):
    out, inside = [], False
    for line in lines:
        if line.startswith(begin):
            inside = True
            continue
        if line.startswith(end):
            inside = False
            continue
        if inside:
            out.append(line)
    return out


def parse_selftests(lines):
    tests, cur = {}, None
    for line in lines:
        m = re.match(r"^@@GVT_RS_TEST_BEGIN (\S+)", line)
        if m:
            cur = {"name": m.group(1), "lines": [], "rc": None}
            tests[cur["name"]] = cur
            continue
        m = re.match(r"^@@GVT_RS_TEST_TIMEOUT (\S+) limit=(\d+)", line)
        if m and cur and m.group(1) == cur["name"]:
            cur["timeout"] = int(m.group(2))
            continue
        m = re.match(r"^@@GVT_RS_TEST_END (\S+) rc=(\d+) start=(\S+) end=(\S+)", line)
        if m and cur:
            cur["rc"] = int(m.group(2))
            try:
                cur["secs"] = float(m.group(4)) - float(m.group(3))
            except ValueError:
                cur["secs"] = 0.0
            cur = None
            continue
        if cur is not None:
            cur["lines"].append(line)
    return tests


def exit_status(rc):
    """An exit status, with the signal it stands for (143: SIGTERM, 137:
    SIGKILL) and GNU timeout's 124."""
    if rc == 124:
        return f"{rc} (timed out)"
    if rc > 128:
        try:
            return f"{rc} ({signal.Signals(rc - 128).name})"
        except ValueError:
            pass
    return str(rc)


def judge_selftest(t):
    """Returns (passed, failed, problems) for one selftest program.

    `failed` counts failing, skipped and missing results, and is at least 1
    when there is any problem (a crash or bad exit status with every
    printed result passing is still a failure).
    """
    plan, results, problems, skip_all = None, [], [], False
    for line in t["lines"]:
        if line.startswith("#") or line.startswith(" "):
            continue
        m = PLAN_RE.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            if plan == 0 and "SKIP" in line:
                skip_all = True
            continue
        m = RESULT_RE.match(line)
        if m:
            results.append((m.group(1) == "ok", m.group(3)))
    passed = [d for ok, d in results if ok and "# SKIP" not in d]
    failed = [d for ok, d in results if not ok]
    skipped = [d for ok, d in results if ok and "# SKIP" in d]
    if t["rc"] is None:
        problems.append("did not finish (crash or timeout)")
    elif t.get("timeout") is not None:
        problems.append(f"stopped by the runner's timeout after {t['timeout']} s, "
                        f"exit status {exit_status(t['rc'])}")
    elif t["rc"] != 0:
        problems.append(f"exit status {exit_status(t['rc'])}")
    if skip_all:
        problems.append("skipped entirely")
    if plan is None:
        problems.append("no TAP plan")
    elif len(results) < plan:
        problems.append(f"{plan - len(results)} of {plan} planned results missing")
    for d in failed:
        problems.append(f"not ok: {d}")
    for d in skipped:
        problems.append(f"skipped: {d}")
    nfailed = len(failed) + len(skipped)
    if plan is not None and len(results) < plan:
        nfailed += plan - len(results)
    if problems and nfailed == 0:
        nfailed = 1
    return len(passed), nfailed, problems


def declared_flavour(tests_dir, name):
    """The "# gvt-rs-flavour: NAME" a selftest declares, or None."""
    if not tests_dir:
        return None
    try:
        with open(os.path.join(tests_dir, name), errors="replace") as fh:
            for line in fh:
                m = re.match(r"^#\s*gvt-rs-flavour:\s*(\S+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def is_skip_all(t):
    """The test skipped entirely and said so: plan 1..0 # SKIP, exit 4."""
    plans = [l for l in t["lines"] if PLAN_RE.match(l)]
    return t["rc"] == 4 and plans and PLAN_RE.match(plans[0]).group(1) == "0" \
        and "SKIP" in plans[0]


def dmesg_time(line):
    m = re.match(r"^\[\s*(\d+\.\d+)\]", line)
    return float(m.group(1)) if m else None


def merge_dmesg(boot, final):
    """The boot log dumped before the tests, then what the final dump has
    after it: the ring buffer may have dropped the boot lines by the end."""
    last = max((t for t in map(dmesg_time, boot) if t is not None), default=None)
    if last is None:
        return final
    first = next((t for t in map(dmesg_time, final) if t is not None), None)
    if first is not None and first > last:
        print(f"  note: the kernel log buffer dropped lines between {last:.3f} s and {first:.3f} s")
    return boot + [l for l in final if (dmesg_time(l) or 0) > last]


def parse_kunit(dmesg):
    """KUnit results: top-level suites {suite: ok}, their cases
    {(suite, case): ok} (a case that failed in any run counts as failed),
    and the failing nested result lines."""
    suites, cases, failures, pending = {}, {}, [], []
    for line in dmesg:
        line = strip(line)
        m = re.match(r"^\s*(not ok|ok) \d+ (\S+)", line)
        if not m:
            continue
        indent = len(line) - len(line.lstrip())
        ok = m.group(1) == "ok"
        name = m.group(2)
        if indent == 0:
            suites[name] = suites.get(name, True) and ok
            # A suite's cases (one level in) print before its own result.
            for case, case_ok in pending:
                key = (name, case)
                cases[key] = cases.get(key, True) and case_ok
            pending = []
        else:
            if indent == 4:
                pending.append((name, ok))
            if not ok:
                failures.append(line.strip())
    return suites, cases, failures


def expected_kunit(dirs):
    names = set()
    for d in dirs:
        for root, _, files in os.walk(d):
            if "/target" in root:
                continue
            for f in files:
                if f.endswith(".rs"):
                    with open(os.path.join(root, f), errors="replace") as fh:
                        for m in re.finditer(r"kunit_tests\((\w+)\)", fh.read()):
                            names.add(m.group(1))
    return sorted(names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--expect-kunit-from", nargs="*", default=[])
    ap.add_argument("--expect-tests", nargs="*", default=[])
    ap.add_argument("--mode", default="check")
    ap.add_argument("--flavour", default="vm")
    ap.add_argument("--tests-dir", default="")
    ap.add_argument("--counts-file", default=os.environ.get("GVT_RS_COUNTS", ""))
    args = ap.parse_args()

    with open(args.log, errors="replace") as fh:
        raw = [l.rstrip("\r\n") for l in fh]
    lines = [strip(l) for l in raw]
    problems = []

    up = [l for l in lines if l.startswith("@@GVT_RS_VM_UP")]
    if not up:
        problems.append("the VM never reached /init")
    else:
        m = re.search(r"cpus=(\d+)", up[0])
        if args.mode == "check" and m and int(m.group(1)) < 2:
            problems.append(f"the VM has {m.group(1)} CPU(s): locking tests need at least 2")
    done = [l for l in lines if l.startswith("@@GVT_RS_VM_DONE")]
    if not done:
        problems.append("the VM did not finish (crash, hang or timeout)")

    dmesg = merge_dmesg(section(lines, "@@GVT_RS_BOOT_DMESG_BEGIN", "@@GVT_RS_BOOT_DMESG_END"),
                        section(lines, "@@GVT_RS_DMESG_BEGIN", "@@GVT_RS_DMESG_END"))
    # Console output also counts: a crash may prevent the dmesg dump.
    console = [l for l in lines if not l.startswith("@@")]
    seen = set()
    for pat, what in KERNEL_ERRORS:
        for l in console:
            if re.search(pat, l) and (what, l) not in seen:
                seen.add((what, l))
                problems.append(f"{what}: {l.strip()}")
                break
    leaks = section(lines, "@@GVT_RS_KMEMLEAK_BEGIN", "@@GVT_RS_KMEMLEAK_END")
    if any("unreferenced object" in l for l in leaks):
        problems.append("kmemleak reported leaks:\n    " + "\n    ".join(leaks[:40]))

    # Problems so far (VM did not boot or finish, kernel errors, leaks) are
    # not test results: each counts as one failure.
    other_failed = len(problems)

    print("== selftests ==")
    tests = parse_selftests(lines)
    total_pass = total_fail = 0
    allowed_skips = set()
    for name in args.expect_tests:
        if name not in tests:
            problems.append(f"selftest {name}: missing from the run")
            other_failed += 1
    for name, t in tests.items():
        need = declared_flavour(args.tests_dir, name)
        if need and need != args.flavour and is_skip_all(t):
            allowed_skips.add(name)
            print(f"  SKIP {name}: needs the {need} flavour (this is {args.flavour})")
            continue
        p, f, probs = judge_selftest(t)
        total_pass += p
        total_fail += f
        status = "PASS" if not probs else "FAIL"
        print(f"  {status} {name}: {p} passed, {f} failed ({t.get('secs', 0):.1f} s)")
        for pr in probs:
            problems.append(f"selftest {name}: {pr}")
        if probs:
            for l in t["lines"][-40:]:
                print(f"      | {l}")

    print("== KUnit ==")
    suites, cases, failures = parse_kunit(dmesg if dmesg else kernel_console(raw))
    kunit_pass = sum(1 for ok in cases.values() if ok)
    kunit_fail = len(cases) - kunit_pass
    for s, ok in sorted(suites.items()):
        n = sum(1 for (suite, _) in cases if suite == s)
        bad = sum(1 for (suite, _), c_ok in cases.items() if suite == s and not c_ok)
        print(f"  {'PASS' if ok else 'FAIL'} {s}: {n - bad}/{n} cases")
        if n == 0:
            # No case results parsed: the suite itself is the one result.
            kunit_pass, kunit_fail = kunit_pass + ok, kunit_fail + (not ok)
        elif not ok and not bad:
            kunit_fail += 1
        if not ok:
            problems.append(f"KUnit suite {s} failed")
    # A module's suites run at every load, so the same failure may repeat.
    for f in sorted(set(failures)):
        problems.append(f"KUnit: {f}")
    if args.mode == "check":
        for s in expected_kunit(args.expect_kunit_from):
            if s not in suites:
                problems.append(f"KUnit suite {s}: expected but did not run")
                other_failed += 1

    if done:
        m = re.search(r"rc=(\d+)", done[-1])
        # A test skipped for another flavour makes the runner exit 1.
        nonzero = [n for n, t in tests.items() if t["rc"] != 0]
        explained = nonzero and all(n in allowed_skips for n in nonzero)
        if m and int(m.group(1)) != 0 and not problems and not explained:
            problems.append(f"the VM's test runner exited with {m.group(1)}")
            other_failed += 1

    passed = total_pass + kunit_pass
    failed = total_fail + kunit_fail + other_failed
    if problems and failed == 0:
        failed = 1
    if args.counts_file:
        with open(args.counts_file, "a") as fh:
            fh.write(f"vm {passed} {failed}\n")

    print("== summary ==")
    if problems:
        for p in problems:
            print(f"  FAIL: {p}")
        print(f"FAILED ({len(problems)} problem(s)); full log: {args.log}")
    else:
        if allowed_skips:
            print(f"  (skipped, need another flavour: {', '.join(sorted(allowed_skips))})")
        print(f"OK: {len(tests)} selftest programs ({total_pass} results), "
              f"{len(suites)} KUnit suites ({kunit_pass} cases), no kernel warnings")
    print(f"vm: {passed} passed, {failed} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
