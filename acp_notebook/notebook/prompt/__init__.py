"""What a prompt carries besides its words: the cells as they ran (``cell_log.py``), read as
context (``cells.py``), and the attachments built from them (``context.py``)."""
