"""Write toolfind/core/english.py: the common English words typo correction never rewrites.

Made from SCOWL's small American and British lists, as Debian ships them (the packages
``wamerican-small`` and ``wbritish-small``, version 2020.12.07)::

    apt-get download wamerican-small wbritish-small
    for f in w*-small_*.deb; do dpkg-deb -x "$f" dict; done
    python scripts/english_words.py dict/usr/share/dict/*-english-small

Kept: lower-case ASCII words (proper nouns are capitalised there, and a query's capitalised
words are never corrected anyway) of four to thirty letters, the lengths typo correction
looks at (``toolfind.core.typos``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HEADER = '''"""Common English words: SCOWL's small American and British lists (size 35:
Debian's wamerican-small and wbritish-small 2020.12.07), lower case, 4 to 30 letters, as
:data:`WORDS`, each between newlines. Written by scripts/english_words.py; data, not code:
``toolfind.core.typos`` imports it on the first word found in no tool.

Copyright 2000-2011 by Kevin Atkinson. Permission to use, copy, modify, distribute and sell
these word lists, the associated scripts, the output created from the scripts, and its
documentation for any purpose is hereby granted without fee, provided that the above
copyright notice appears in all copies and that both that copyright notice and this
permission notice appear in supporting documentation. Kevin Atkinson makes no
representations about the suitability of this array for any purpose. It is provided "as is"
without express or implied warranty.
"""

'''


def main(paths: list[str]) -> int:
    words: set[str] = set()
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            word = line.strip()
            if word.isascii() and word.isalpha() and word.islower() and 4 <= len(word) <= 30:
                words.add(word)
    out = Path(__file__).resolve().parent.parent / "toolfind" / "core" / "english.py"
    text = "\\n" + "\\n".join(sorted(words)) + "\\n"
    out.write_text(f'{HEADER}WORDS = "{text}"\n', encoding="utf-8")
    sys.stderr.write(f"{out}: {len(words)} words\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
