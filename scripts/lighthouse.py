#!/usr/bin/env python3
"""Lighthouse (mobile) on the home page and on a real room's join page, against a throwaway server.

    .venv/bin/python scripts/lighthouse.py [--runs 3] [--keep DIR]

It starts ``crisp-server`` on a free port with an empty data folder, creates a room through the WebSocket
protocol (its host stays connected, so the room stays open), runs Lighthouse on ``/`` and ``/r/CODE`` and
prints the four category scores and the cumulative layout shift of each page. With ``--runs N`` each page
is measured N times and the median run (by performance score) is printed, since a shared machine's CPU
makes single performance figures noisy.

Lighthouse comes from ``$LIGHTHOUSE`` (a path to its binary), else ``npx --yes lighthouse@12.8.2`` (12.x
runs on Node 18 and newer); Chromium from ``$CHROME_PATH`` (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from crisp_server.remote.client import CrispClient

ROOT = Path(__file__).resolve().parent.parent

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(base: str, server: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer {base}/healthz within {timeout:.0f} s")


def lighthouse_command() -> list[str]:
    given = os.environ.get("LIGHTHOUSE")
    return shlex.split(given) if given else ["npx", "--yes", "lighthouse@12.8.2"]


def run_lighthouse(url: str, out: Path) -> dict[str, Any]:
    command = [
        *lighthouse_command(),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={CHROME_FLAGS}",
    ]
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def summary(report: dict[str, Any]) -> dict[str, float]:
    scores = {name: round(report["categories"][name]["score"] * 100) for name in CATEGORIES}
    audits = report["audits"]
    return {
        **scores,
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "fcp_ms": audits["first-contentful-paint"]["numericValue"],
        "lcp_ms": audits["largest-contentful-paint"]["numericValue"],
    }


def failing_audits(report: dict[str, Any]) -> list[str]:
    """The audits that cost points outside performance (those must be 100), with their titles."""
    failing = []
    for name in CATEGORIES[1:]:
        for ref in report["categories"][name]["auditRefs"]:
            audit = report["audits"][ref["id"]]
            if ref["weight"] > 0 and audit["score"] is not None and audit["score"] < 1:
                failing.append(f"{name}: {ref['id']} ({audit['title']})")
    return failing


async def measure(base: str, runs: int, keep: Path) -> int:
    async with CrispClient.connect(base.replace("http", "ws", 1) + "/ws") as host:
        code = await host.create("Ana")
        status = 0
        for label, path in (("home", "/"), ("join", f"/r/{code}")):
            results = []
            for run in range(runs):
                report = run_lighthouse(base + path, keep / f"{label}-{run + 1}.json")
                results.append((summary(report), report))
            results.sort(key=lambda r: r[0]["performance"])
            figures, report = results[len(results) // 2]
            perfs = [r[0]["performance"] for r in results]
            print(
                f"{path if label == 'home' else '/r/CODE':8} performance {figures['performance']:3.0f}"
                f" (runs: {', '.join(f'{p:.0f}' for p in perfs)}, median {statistics.median(perfs):.0f})"
                f"  accessibility {figures['accessibility']:3.0f}  best-practices {figures['best-practices']:3.0f}"
                f"  SEO {figures['seo']:3.0f}  CLS {figures['cls']:.3f}"
                f"  FCP {figures['fcp_ms']:.0f} ms  LCP {figures['lcp_ms']:.0f} ms"
            )
            for line in failing_audits(report):
                print(f"    {line}")
                status = 1
            if figures["performance"] < 95:
                status = 1
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Lighthouse runs per page; the median is printed")
    parser.add_argument("--keep", type=Path, help="keep the JSON reports in this folder")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="crisp-lighthouse-") as scratch:
        keep = args.keep or Path(scratch)
        keep.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "CRISP_DATA_DIR": str(Path(scratch) / "data")}
        server = subprocess.Popen(
            [sys.executable, "-m", "crisp_server", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_healthy(base, server)
            return asyncio.run(measure(base, max(1, args.runs), keep))
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
