#!/usr/bin/python3
"""`ddlsim report --html` pages in headless Chromium (Debian: chromium).

1. The checker itself: a page whose script throws must be caught (a console line, no rendered mark).
2. The page of tests/golden/quickstart.json: no console message at all (the page's script writes none, so any line
   is an error or an uncaught exception), and the mark its script sets after it finds every chart drawn
   (data-ddlsim-rendered="ok"; a script that stops early never sets it).
3. A report whose strings hold markup and scripts: its page renders, and none of them ran.
4. A 1200 x 1900 screenshot: a PNG of that size, not blank (many distinct byte values once decompressed).

Exits 77 (skipped) only where chromium is not installed or cannot load about:blank; every other problem fails.
usage: check_html_chromium.py DDLSIM BUILD_DIR   (from the source directory)
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

ddlsim, build = sys.argv[1], sys.argv[2]
work = os.path.abspath(os.path.join(build, "report-check"))
os.makedirs(work, exist_ok=True)
WIDTH, HEIGHT = 1200, 1900


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def skip(message):
    print(f"skipped: {message}")
    sys.exit(77)


chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    skip("chromium is not installed (Debian: apt-get install chromium; scripts/install-deps.sh installs it)")
# --no-sandbox: the suite may run as root, where Chromium's sandbox refuses to start; a profile of its own
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--hide-scrollbars", f"--user-data-dir={work}/profile", "--enable-logging=stderr", "--v=0"]


def browse(*args, url):
    try:
        return subprocess.run([chromium, *FLAGS, *args, url], capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        fail(f"chromium {' '.join(args)} {url}: no answer in 180 s")


probe = browse("--dump-dom", url="about:blank")
if probe.returncode != 0 or "<body" not in probe.stdout:
    last = [line for line in probe.stderr.splitlines() if line.strip()][-1:] or ["no message"]
    skip(f"chromium cannot start here (exit {probe.returncode}: {last[0][:200]})")


def console_lines(p):
    """Chromium logs every console message and uncaught exception of a page as an INFO:CONSOLE line."""
    return [line for line in p.stderr.splitlines() if ":CONSOLE" in line]


def load(page):
    """The DOM after the page's script ran, and its console lines."""
    p = browse("--dump-dom", url="file://" + page)
    if p.returncode != 0:
        fail(f"chromium --dump-dom {page}: exit {p.returncode}")
    return p.stdout, console_lines(p)


def ddlsim_report(report, page):
    if os.path.exists(page):
        os.remove(page)
    p = subprocess.run([ddlsim, "report", report, "--html", page], capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(page):
        fail(f"ddlsim report {report}: exit {p.returncode}: {p.stderr.strip()}")


# 1. The checker catches a page whose script fails.
quickstart = os.path.join(work, "quickstart.html")
ddlsim_report("tests/golden/quickstart.json", quickstart)
broken = os.path.join(work, "broken.html")
with open(quickstart, encoding="utf-8") as f:
    html = f.read()
with open(broken, "w", encoding="utf-8") as f:
    f.write(html.replace("var charts = document", "undefinedFunction(); var charts = document", 1))
dom, console = load(broken)
if not console or 'data-ddlsim-rendered="ok"' in dom:
    fail("the checker missed a script that throws (no console line, or the page still marked rendered)")
print(f"checker: a failing script is caught ({console[0].split('] ', 1)[-1][:80]})")

# 2. The real page.
dom, console = load(quickstart)
if console:
    fail(f"{quickstart}: console: {console[0]}")
if 'data-ddlsim-rendered="ok"' not in dom:
    fail(f"{quickstart}: the page's script did not mark it rendered (charts drawn: "
         f"{dom.split('data-ddlsim-charts=')[1][:8] if 'data-ddlsim-charts=' in dom else 'none'})")
charts = dom.split('data-ddlsim-charts="')[1].split('"')[0]
if charts != "2/2":
    fail(f"{quickstart}: charts drawn {charts}, expected 2/2")
if ">174.438 ms<" not in dom:
    fail(f"{quickstart}: the iteration time is not in the rendered page")
print(f"quickstart: no console message, {charts} charts drawn, the script finished")

# 3. Strings that are markup stay text.
with open("tests/golden/quickstart.json", encoding="utf-8") as f:
    report = json.load(f)
attack = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
report["model"] = "<script>document.body.setAttribute('data-pwned','script')</script>"
report["gpu"] = attack
report["config"]["platform_file"] = "\"><svg onload=\"document.body.setAttribute('data-pwned','svg')\">"
report["links"][0]["name"] = "</td></tr></table><script>document.body.setAttribute('data-pwned','link')</script>"
evil_json = os.path.join(work, "evil.json")
with open(evil_json, "w", encoding="utf-8") as f:
    json.dump(report, f)
evil = os.path.join(work, "evil.html")
ddlsim_report(evil_json, evil)
dom, console = load(evil)
if "data-pwned" in dom.split("<body", 1)[1].split(">", 1)[0]:
    fail(f"{evil}: markup from the report ran: {dom.split('<body', 1)[1].split('>', 1)[0]}")
if console or 'data-ddlsim-rendered="ok"' not in dom:
    fail(f"{evil}: console {console[:1]}, or not rendered")
print("escaping: injected markup did not run (model, GPU, platform, link name), the page rendered")

# 4. The screenshot.
png = os.path.join(work, "quickstart.png")
if os.path.exists(png):
    os.remove(png)
p = browse(f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", url="file://" + quickstart)
if p.returncode != 0 or not os.path.exists(png):
    fail(f"chromium --screenshot: exit {p.returncode}, no {png}")
if console_lines(p):
    fail(f"{quickstart}: console during the screenshot: {console_lines(p)[0]}")
with open(png, "rb") as f:
    data = f.read()
if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
    fail(f"{png}: not a PNG")
width, height = struct.unpack(">II", data[16:24])
if (width, height) != (WIDTH, HEIGHT):
    fail(f"{png}: {width} x {height}, expected {WIDTH} x {HEIGHT}")
idat, at = b"", 8
while at < len(data):
    length, kind = struct.unpack(">I4s", data[at:at + 8])
    if kind == b"IDAT":
        idat += data[at + 8:at + 8 + length]
    at += 12 + length
pixels = zlib.decompress(idat)
distinct = len(set(pixels))
if distinct < 100:  # a blank or one-colour page has a handful of byte values
    fail(f"{png}: only {distinct} distinct byte values: a blank page?")
print(f"screenshot: {png}: {width} x {height} PNG, {len(data)} bytes, {distinct} distinct byte values")
