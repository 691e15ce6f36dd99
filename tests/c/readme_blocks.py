"""Writes the ```c blocks of README.md and bindings/c/README.md into one C
file with a main() that calls them (print_events on a two-event stream, then
" ok" when it returned OK):
the C test suite builds and runs it (CTest readme_c)."""

import pathlib
import re
import sys

root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
blocks = []
for readme in (root / "README.md", root / "bindings" / "c" / "README.md"):
    blocks += re.findall(r"^```c\n(.*?)^```", readme.read_text(encoding="utf-8"), re.M | re.S)
if not blocks:
    sys.exit("no ```c block in the READMEs")
main = r"""
int main(void) {
  static const char body[] = "data: hello\n\nevent: x\ndata: world\n\n";
  if (print_events((const uint8_t *)body, sizeof body - 1) != SSEFOLD_RESULT_OK) return 1;
  puts(" ok");
  return 0;
}
"""
out.write_text("\n".join(blocks) + main, encoding="utf-8")
