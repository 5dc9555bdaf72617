"""What ``%load_ext acp_notebook`` imports, and nothing heavier: the extension, the ``%acp``
magics and their configuration, Tab completion, the input transformers and headless
detection (``tests/notebook/test_load_imports.py``); and the line's reader (``options.py``),
which the first ``%acp`` loads."""
