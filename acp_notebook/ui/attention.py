"""A pending permission prompt makes itself found, and answers keys.

After Run All every cell shows ``[*]`` and the page sits at the bottom, so a question
asked by a cell above goes unseen. While a prompt waits, its card carries a small
script (the ``onerror`` of an image that cannot load: ipywidgets' ``HTML`` sets
``innerHTML``, which runs no ``<script>``; this works in JupyterLab, Notebook 7 and
VS Code without a frontend extension). When the card appears it:

* scrolls the card into sight and gives it the keyboard focus, unless the user is
  typing somewhere (an editor or a field has the focus): then a banner at the top of
  the page names the waiting cell, with a button that brings it into sight; the banner
  goes away once the question is answered;
* answers keys while the card has the focus: ``1``…``9`` press that option's button,
  ``Escape`` presses the reject option (``reject_once``), ``c`` presses the turn's Cancel
  (the whole turn stops; spec: its pending requests are answered ``cancelled``). The keys
  stop there, so JupyterLab's command-mode shortcuts (``1`` makes a heading, ``c`` copies
  the cell) do not fire; ``Enter`` and ``Space`` press the focused button as any button does.

The script is this module's constant: no agent text goes into it.
"""

from __future__ import annotations

import html

#: CSS classes on the prompt's frame and buttons, read by the script.
CARD_CLASS = "acp-permission-card"
OPTION_CLASS = "acp-permission-option"
REJECT_CLASS = "acp-permission-reject"
BANNER_CLASS = "acp-permission-banner"
#: The turn's view and its Cancel button (``turn.py``), for the ``c`` key.
TURN_CLASS = "acp-turn"
CANCEL_CLASS = "acp-turn-cancel"


def keys_hint(count: int) -> str:
    """What the card says about its keys (``count`` options)."""
    first = "1" if count == 1 else f"1–{min(count, 9)}"
    return (
        f"Keys while this card has the focus: {first} choose an option · Esc rejects · "
        "C cancels the turn"
    )


_SCRIPT = """
(function (img) {
  var card = img.closest('.__CARD__');
  if (!card || card.dataset.acpAttention) { return; }
  card.dataset.acpAttention = '1';
  card.tabIndex = -1;
  var options = function () {
    return Array.prototype.filter.call(
      card.querySelectorAll('button.__OPTION__'), function (b) { return !b.disabled; });
  };
  card.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var buttons = options(), target = null, n = parseInt(event.key, 10);
    if (n >= 1 && n <= buttons.length) { target = buttons[n - 1]; }
    else if (event.key === 'Escape') {
      target = card.querySelector('button.__REJECT__:not(:disabled)');
    } else if (event.key === 'c' || event.key === 'C') {
      var turn = card.closest('.__TURN__');
      target = turn && turn.querySelector('button.__CANCEL__:not(:disabled)');
    }
    if (!target) { return; }
    event.preventDefault();
    event.stopPropagation();
    target.click();
  });
  var show = function () {
    card.scrollIntoView({block: 'center'});
    card.focus({preventScroll: true});
  };
  var active = document.activeElement;
  var typing = active && active !== document.body && active.closest(
    '.cm-editor, input, textarea, select, [contenteditable="true"]');
  if (!typing) { show(); return; }
  var cells = Array.prototype.slice.call(document.querySelectorAll('.jp-Notebook .jp-Cell'));
  var cell = card.closest('.jp-Cell');
  var banner = document.createElement('div');
  banner.className = '__BANNER__';
  banner.setAttribute('role', 'alert');
  banner.style.cssText = 'position: fixed; top: 8px; left: 50%; transform: translateX(-50%);'
    + ' z-index: 10000; padding: 6px 12px; border-radius: 4px;'
    + ' background: var(--jp-warn-color3, #fff3e0); color: var(--jp-ui-font-color0, #000);'
    + ' border: 1px solid var(--jp-warn-color1, #f57c00); box-shadow: 0 2px 6px rgba(0,0,0,.2);'
    + ' font-size: var(--jp-ui-font-size1, 13px)';
  banner.textContent = '\\ud83d\\udd10 ' + (cell ? 'Cell ' + (cells.indexOf(cell) + 1) : 'A cell')
    + ' waits for your permission. ';
  var go = document.createElement('button');
  go.textContent = 'Show it';
  go.onclick = function () { show(); banner.remove(); };
  banner.appendChild(go);
  document.body.appendChild(banner);
  var timer = setInterval(function () {
    if (!card.isConnected || options().length === 0) { clearInterval(timer); banner.remove(); }
  }, 500);
})(this);
"""
for _name, _css_class in (
    ("__CARD__", CARD_CLASS),
    ("__OPTION__", OPTION_CLASS),
    ("__REJECT__", REJECT_CLASS),
    ("__BANNER__", BANNER_CLASS),
    ("__TURN__", TURN_CLASS),
    ("__CANCEL__", CANCEL_CLASS),
):
    _SCRIPT = _SCRIPT.replace(_name, _css_class)

#: The HTML that carries the script (an image that cannot load runs its ``onerror``).
BEACON = (
    f'<img src="data:," alt="" style="display: none" '
    f'onerror="{html.escape(" ".join(_SCRIPT.split()), quote=True)}">'
)
