"""What a turn changed (files written, cells edited): reverted without destroying later work
(`revert.py`), and drawn in the page's `%acp` cell with a Revert per hunk (`page.py`)."""
