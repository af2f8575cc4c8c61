#!/usr/bin/env bash
# Issue 46 item 4: `l2s plan --pareto` writes a chart people can read. The SVG is rendered with
# Debian's rsvg-convert (package librsvg2-bin) and the PNG is checked pixel by pixel (python3, no
# extra packages): the picture has the SVG's size, the legend box lies inside the plot frame and
# holds dark (text) pixels, the SLO region is shaded red, and nothing is drawn on the outermost
# pixels (a clipped label would touch the edge). Also `plan --gpu a,b --pareto` (one series per
# GPU type, cost on y) and --x-scale linear.
# Usage: pareto_svg_test.sh L2S_BINARY. Exit 77 (ctest: skipped) only when rsvg-convert is absent.
set -euo pipefail
l2s="$1"
if ! command -v rsvg-convert >/dev/null 2>&1; then
  echo "SKIP: rsvg-convert not found (Debian package librsvg2-bin; scripts/setup.sh installs it)"
  exit 77
fi
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

check_png() {  # check_png SVG PNG EXPECT_SPAN(0/1) LABEL...
  python3 - "$@" <<'EOF'
import re, struct, sys, zlib
svg_path, png_path, want_span = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
labels = sys.argv[4:]
svg = open(svg_path).read()
def fail(msg):
    print("FAIL:", msg, file=sys.stderr); sys.exit(1)
m = re.search(r'<svg[^>]* width="([0-9.]+)" height="([0-9.]+)"', svg)
sw, sh = int(float(m.group(1))), int(float(m.group(2)))
# The PNG: IHDR, concatenated IDAT, unfiltered scanlines (8-bit RGB or RGBA, not interlaced).
data = open(png_path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n": fail("not a PNG")
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
if (w, h) != (sw, sh): fail(f"PNG is {w}x{h}, the SVG says {sw}x{sh}")
if depth != 8 or ctype not in (2, 6) or interlace: fail(f"unexpected PNG format {depth} {ctype}")
bpp = 4 if ctype == 6 else 3
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def px(x, y):
    r = rows[y]
    return tuple(r[x * bpp:x * bpp + 3])
def rect(cls):
    m = re.search(r'<rect class="%s" x="([-0-9.]+)" y="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"' % cls, svg)
    if not m: fail(f"no {cls} rect in the SVG")
    x, y, rw, rh = map(float, m.groups())
    return x, y, x + rw, y + rh
# The plot frame: the unfilled rect with the dark stroke.
m = re.search(r'<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="none" stroke="#333333"/>', svg)
fx0, fy0 = float(m.group(1)), float(m.group(2))
fx1, fy1 = fx0 + float(m.group(3)), fy0 + float(m.group(4))
lx0, ly0, lx1, ly1 = rect("legend-box")
if not (fx0 <= lx0 and fy0 <= ly0 and lx1 <= fx1 and ly1 <= fy1):
    fail(f"legend box {lx0,ly0,lx1,ly1} is not inside the frame {fx0,fy0,fx1,fy1}")
# The legend holds its labels: dark pixels (text, samples) inside the box.
dark = sum(1 for y in range(int(ly0) + 2, int(ly1) - 1) for x in range(int(lx0) + 2, int(lx1) - 1)
           if sum(px(x, y)) < 3 * 110)
if dark < 200: fail(f"the legend box has only {dark} dark pixels: no labels drawn")
# Nothing on the picture's outermost two pixels: all background.
for y in list(range(2)) + list(range(h - 2, h)):
    for x in range(w):
        if px(x, y) != (255, 255, 255): fail(f"pixel ({x},{y}) at the edge is {px(x, y)}")
for x in list(range(2)) + list(range(w - 2, w)):
    for y in range(h):
        if px(x, y) != (255, 255, 255): fail(f"pixel ({x},{y}) at the edge is {px(x, y)}")
if want_span:
    sx0, sy0, sx1, sy1 = rect("span")
    x, y = int((sx0 + sx1) / 2), int(sy0 + (sy1 - sy0) / 3)
    r, g, b = px(x, y)
    if not (r > g + 10 and r > b + 10): fail(f"the SLO region at ({x},{y}) is not shaded red: {r,g,b}")
for l in labels:
    if l not in svg: fail(f"label {l!r} missing")
print(f"ok: {svg_path} {w}x{h}, legend {int(lx0)},{int(ly0)}-{int(lx1)},{int(ly1)} with {dark} dark pixels")
EOF
}

# 1. plan --pareto: aggregated, disaggregated and engine-launchable series, the SLO shaded.
"$l2s" plan --model llama-3.1-8b --gpus 8 --pareto --budget 200 --slo tpot_ms=20 \
  --svg "$d/p.svg" --json >"$d/p.json" 2>"$d/p.err" || fail "plan --pareto: $(cat "$d/p.err")"
grep -q "wrote $d/p.svg" "$d/p.err" || fail "the SVG's path is not said on stderr: $(cat "$d/p.err")"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['svg']==sys.argv[2], j['svg']" \
  "$d/p.json" "$d/p.svg" || fail "--json has no \"svg\": path"
rsvg-convert "$d/p.svg" -o "$d/p.png" || fail "rsvg-convert could not render p.svg"
check_png "$d/p.svg" "$d/p.png" 1 "aggregated, paper&apos;s space (TPOT sweep" \
  "disaggregated, paper&apos;s space (TPOT sweep" \
  "launchable (TPOT sweep" "violates the SLO: TPOT &gt; 20 ms" "(log scale)"

# 2. --x-scale linear: no "(log scale)" on the x label; still a readable picture.
"$l2s" plan --model llama-3.1-8b --gpus 8 --pareto --budget 200 --serving agg --x-scale linear \
  --slo tpot_ms=20 --svg "$d/lin.svg" >/dev/null 2>"$d/lin.err" || fail "--x-scale linear: $(cat "$d/lin.err")"
grep -q 'class="xlabel">tokens/s per user (1000 / TPOT ms)<' "$d/lin.svg" || fail "x label of --x-scale linear"
rsvg-convert "$d/lin.svg" -o "$d/lin.png"
check_png "$d/lin.svg" "$d/lin.png" 1 "aggregated, paper&apos;s space (TPOT sweep"

# 3. plan --gpu h100,h200 --pareto with prices: one series per GPU type, $ per million tokens on y.
"$l2s" plan --model llama-3.1-8b --gpus 8 --gpu h100,h200 --price-per-gpu-hour 2.5,3.5 --pareto \
  --budget 200 --serving agg --slo tpot_ms=20 --svg "$d/hw.svg" >"$d/hw.txt" 2>"$d/hw.err" ||
  fail "plan --gpu h100,h200 --pareto: $(cat "$d/hw.err")"
rsvg-convert "$d/hw.svg" -o "$d/hw.png"
check_png "$d/hw.svg" "$d/hw.png" 1 "h100 at \$2.5/GPU-h" "h200 at \$3.5/GPU-h" \
  "\$ per million output tokens"
echo "pareto_svg_test: ok"
