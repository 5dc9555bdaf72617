"""How a turn shows in its cell: the live cell of widgets, or plain text where the frontend
shows none."""
