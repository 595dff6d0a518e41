"""Certificates for a list of optima: ``solve --certificate`` then ``check-certificate``, per instance.

Usage:
    python bench/certify_sweep.py MODEL INSTANCE [INSTANCE ...] [--vary KEY=V1,V2,...] [-O KEY=VALUE ...]
        [--engine astar] [--time-limit 300] [--max-memory 8000] [--check-time-limit 1800]
        [--check-max-memory 8000] [--check-jobs 1] [--certificate-bound g|f] [--dir DIR] [--keep]
        [-o FILE]

For each instance and each value of the varied option (e.g. ``--vary level=147,149`` on a
multi-level Sokoban file; several instance files, e.g. Kwirk's floors, without ``--vary``), the
search runs in a process of its own with the run's limits, which the certificate pass keeps too
(docs/certificates.md); if it wrote a file, ``check-certificate`` (the plain-Python checker,
another process) judges it.  Why a script and not a suite: a certificate is two commands, and the
figures that matter are the certificate's size and the writing and checking times, which a solve
record does not hold.  An optimum counts as *confirmed by a certificate* only when the check says
``valid``; a limit in the certificate pass, or in the check (``undecided``), is recorded with its
one-line reason.  The JSON is rewritten after every instance, with the load (``uptime``) before
each run, and a Markdown table is written beside it.  With ``--certificate-bound f`` the
certificates hold only the states with g + h < C and trust the model's admissible heuristic
(docs/certificates.md); the summary says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from puzzleplan.bench.scripting import markdown, parser, uptime, write_json


def command() -> list[str]:
    """The installed console script beside this interpreter (what a user runs), else its entry point."""
    script = shutil.which("puzzleplan", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from puzzleplan.launch import main; main()"]


def run(cmd: list[str], timeout: float) -> tuple[dict[str, Any] | None, str, float, float | None]:
    """(the one JSON object the command printed, None if it printed none; its stderr; wall s; its
    peak resident MiB, None where ``os.wait4`` is missing).

    The peak is the kernel's own (``ru_maxrss`` of the reaped child): the whole process, the
    certificate pass included, where the solve record's ``rss_peak_mb`` covers the search alone.
    Past ``timeout`` the child is killed."""
    t0 = time.perf_counter()
    if not hasattr(os, "wait4"):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        return _parse(p.stdout), p.stderr, time.perf_counter() - t0, None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err)
        while True:
            pid, _, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                child.kill()
                _, _, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.1)
        child.returncode = 0   # reaped here: Popen must not wait for it again
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        peak = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
        return _parse(out.read().decode()), err.read().decode(errors="replace"), wall, round(peak, 1)


def _parse(text: str) -> dict[str, Any] | None:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no output"])[-1]


def one(args: Any, instance: str, key: str | None, value: str | None) -> dict[str, Any]:
    options = [*args.option, *([f"{key}={value}"] if key else [])]
    flags = [x for o in options for x in ("-O", o)]
    # every option in the name: two sweeps side by side (pushes and moves) never share a file
    tag = "-".join(o.replace("=", "-").replace("/", "_") for o in options)
    by_h = ".f" if args.certificate_bound == "f" else ""
    cert = Path(args.dir) / f"{Path(instance).stem}-{tag}{by_h}.cert"
    cert.unlink(missing_ok=True)
    exe = command()
    row: dict[str, Any] = {"instance": instance, **({key: value} if key else {}), "options": options,
                           "load_before": uptime()}
    solve = [*exe, "solve", args.model, instance, *flags, "-e", args.engine, "--time-limit",
             str(args.time_limit), "--max-memory", str(args.max_memory), "--certificate", str(cert),
             "--certificate-bound", args.certificate_bound, "--json"]
    doc, err, wall, peak = run(solve, timeout=3 * args.time_limit + 120)
    row.update(solve_wall_s=round(wall, 2), solve_peak_rss_mb=peak)
    if doc is None:
        row.update(status="error", error=last_line(err))
        return row
    stats = doc.get("stats", {})
    row.update(status=doc.get("status"), cost=doc.get("cost"), optimal=doc.get("optimal"),
               search_s=stats.get("time_s"), rss_peak_mb=stats.get("rss_peak_mb"))
    c = doc.get("certificate") or {}
    row.update(cert_states=c.get("states"), cert_bytes=c.get("bytes"), cert_write_s=c.get("write_s"))
    note = [ln for ln in err.splitlines() if "no certificate written" in ln]
    if note:
        row["not_written"] = note[-1].strip()
    if not cert.exists():
        row["certificate"] = "not written"
        return row
    check = [*exe, "check-certificate", args.model, instance, str(cert), *flags, "--json",
             "--time-limit", str(args.check_time_limit), "--max-memory", str(args.check_max_memory),
             "--jobs", str(args.check_jobs)]
    chk, err, cwall, cpeak = run(check, timeout=args.check_time_limit + 120)
    # the parent's own peak: the forked workers share its arrays copy-on-write (their sum is in
    # the check's own memory watch)
    row.update(check_wall_s=round(cwall, 2), check_peak_rss_mb=cpeak)
    if chk is None:
        row.update(certificate="check failed", error=last_line(err))
        return row
    verdict = "valid" if chk.get("valid") else "undecided" if chk.get("undecided") else "rejected"
    row.update(certificate=verdict, undecided=chk.get("undecided"), check_cost=chk.get("cost"),
               check_kind=chk.get("kind"), check_s=chk.get("check_s"), check_mode=chk.get("mode"),
               check_bound=chk.get("bound"), excused=chk.get("excused"),
               reference_states=chk.get("reference_states"),
               check_reason=chk.get("reason"))
    if not args.keep:
        cert.unlink(missing_ok=True)
    return row


def main() -> None:
    ap = parser(__doc__, out_default="results/certify-sweep.json")
    ap.add_argument("model")
    ap.add_argument("instance", nargs="+")
    ap.add_argument("--vary", metavar="KEY=V1,V2,...",
                    help="one run per value of this model option (for each instance)")
    ap.add_argument("-O", dest="option", action="append", default=[], metavar="KEY=VALUE",
                    help="model option for every run")
    ap.add_argument("--engine", default="astar")
    ap.add_argument("--time-limit", type=float, default=300.0,
                    help="solve's limit (its certificate pass keeps it)")
    ap.add_argument("--max-memory", type=int, default=8000,
                    help="solve's MiB limit (the certificate pass keeps it)")
    ap.add_argument("--check-time-limit", type=float, default=1800.0,
                    help="check-certificate's time limit (undecided past it)")
    ap.add_argument("--check-max-memory", type=int, default=8000,
                    help="check-certificate's MiB limit (undecided past it)")
    ap.add_argument("--check-jobs", type=int, default=1,
                    help="check-certificate's forked processes (--jobs)")
    ap.add_argument("--certificate-bound", choices=("g", "f"), default="g",
                    help="g: every state cheaper than the optimum; f: g + h below it (trusts the "
                         "model's admissible heuristic)")
    ap.add_argument("--dir", default="results/certificates", help="where the certificate files go")
    ap.add_argument("--keep", action="store_true",
                    help="keep the certificate files (default: deleted once checked)")
    args = ap.parse_args()
    key, _, values = (args.vary or "").partition("=")
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"command": " ".join(sys.argv), "model": args.model, "instances": args.instance,
                           "engine": args.engine, "time_limit_s": args.time_limit,
                           "max_memory_mb": args.max_memory, "check_jobs": args.check_jobs,
                           "certificate_bound": args.certificate_bound,
                           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "records": []}
    several = len(args.instance) > 1

    def name(r: dict[str, Any]) -> str:
        return " ".join(([Path(r["instance"]).stem] if several or not key else [])
                        + ([f"{r[key]}"] if key else []))

    for instance in args.instance:
        for value in [v for v in values.split(",") if v] or [None]:
            row = one(args, instance, key or None, value)
            doc["records"].append(row)
            write_json(args.out, doc)
            print(f"{name(row)}: {row.get('status')} {row.get('cost')}, certificate {row.get('certificate')}"
                  f" ({row.get('cert_states')} states; check {row.get('check_s')} s)", file=sys.stderr)
    rows = [[name(r), r.get("status"), r.get("cost"), r.get("certificate"), r.get("cert_states"),
             r.get("cert_write_s"), r.get("solve_peak_rss_mb"), r.get("check_s"),
             r.get("not_written") or r.get("undecided") or r.get("error") or ""] for r in doc["records"]]
    n = sum(r.get("certificate") == "valid" for r in doc["records"])
    trust = (" bounded by g + h (the model's heuristic trusted to be admissible)"
             if args.certificate_bound == "f" else "")
    doc["summary"] = f"{n} of {len(doc['records'])} optima confirmed by a checked certificate{trust}"
    write_json(args.out, doc)
    head = [key or "instance", "status", "cost", "certificate", "states", "write s", "solve peak MiB",
            "check s", "note"]
    Path(args.out).with_suffix(".md").write_text(markdown(head, rows) + "\n" + doc["summary"] + "\n")
    print(doc["summary"])


if __name__ == "__main__":
    main()
