#!/usr/bin/env bash
# Builds the fonts of the PDF reports (content/fonts/, see its README.md) from Debian's Noto packages:
#   apt-get install -y fonts-noto-core fonts-noto-cjk python3-fonttools
# Noto Sans (Latin, Greek, Cyrillic) is cut to those scripts and their punctuation; Noto Sans CJK SC to
# the characters of the East Asian legacy character sets (GB 2312, JIS X 0208, the 2,350 Hangul
# syllables of KS X 1001), kana, Hangul compatibility jamo and full-width forms, then brotli-compressed:
# the report loads it only when a text needs it. Hinting is dropped (a PDF viewer does not use it).
set -euo pipefail
out="$(cd "$(dirname "$0")/../.." && pwd)/content/fonts"
core=/usr/share/fonts/truetype/noto
cjk=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
py=/usr/bin/python3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

latin="U+0000-036F,U+0370-03FF,U+0400-052F,U+1C80-1C8F,U+1E00-1FFF,U+2000-206F,U+2070-209F,U+20A0-20CF,U+2100-215F,U+2190-21FF,U+2200-22FF,U+2460-24FF,U+25A0-25FF,U+2C60-2C7F,U+2DE0-2DFF,U+A640-A69F,U+A720-A7FF,U+FB00-FB06,U+FFFD"
for weight in Regular Bold; do
  "$py" -m fontTools.subset "$core/NotoSans-$weight.ttf" --unicodes="$latin" --no-hinting \
    --layout-features='kern,liga,mark,mkmk,ccmp,locl' --name-IDs='*' --output-file="$out/NotoSans-$weight.ttf"
done

# Every ideograph, kana and Hangul syllable that GB 2312, JIS X 0208 (Shift_JIS) or KS X 1001 (EUC-KR,
# syllables only: its hanja are in the other two) encode in two bytes.
# Only the kern feature is kept: the alternates of other features (vertical, the JP/KR/TC forms of
# locl) would double the glyph count, and a report sets horizontal Simplified Chinese forms.
"$py" - >"$work/cjk.txt" <<'PY'
def two(cp, codec):
    try:
        return len(chr(cp).encode(codec)) == 2
    except UnicodeError:
        return False
chars = [cp for cp in range(0x2E80, 0xFFEF)
         if two(cp, 'gb2312') or two(cp, 'shift_jis') or (0xAC00 <= cp <= 0xD7A3 and two(cp, 'euc_kr'))]
print(','.join('U+%04X' % cp for cp in chars))
PY
# Font 2 of the collection is Noto Sans CJK SC.
"$py" -m fontTools.subset "$cjk" --font-number=2 --unicodes="$(cat "$work/cjk.txt"),U+3000-303F,U+3040-30FF,U+3130-318F,U+FF00-FFEF" \
  --no-hinting --name-IDs='*' --layout-features='kern' --output-file="$work/NotoSansCJKsc-Regular.otf"
node -e '
const { brotliCompressSync, constants } = require("node:zlib");
const { readFileSync, writeFileSync } = require("node:fs");
const params = { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_FONT };
writeFileSync(process.argv[2], brotliCompressSync(readFileSync(process.argv[1]), { params }));
' "$work/NotoSansCJKsc-Regular.otf" "$out/NotoSansCJKsc-Regular.otf.br"
ls -l "$out"
