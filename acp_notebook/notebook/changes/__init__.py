"""What a turn changed (files written, cells edited): reverted without overwriting later work
(``revert.py``), and drawn in the page's ``%acp`` cell with a Revert per hunk (``page.py``)."""
