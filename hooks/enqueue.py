"""funes hook launcher: `python3 -I -S enqueue.py --agent A --spool DIR ...` (see funes_hook.py).

The hook itself is funes_hook.py beside this file. This launcher only puts its own folder on
sys.path (`-I` leaves it off) and imports it, so each call runs the bytecode Python caches in
`__pycache__/` instead of compiling ~600 lines (2.7 ms of a 10 ms call, measured for issue 15);
the launcher is all that is compiled per call. Standard library only, like the hook.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from funes_hook import main  # noqa: E402

main()
