"""Permission rules: short lines a person writes, that answer permission requests
before the session's policy does.

    allow read                    every tool call of kind read
    allow search
    deny delete
    allow edit *.py               edits whose every file matches *.py (at any depth)
    allow edit src/**             … every file under src/ (paths relative to the session cwd)
    allow execute pytest*         commands matching pytest*
    allow execute "git status"    exactly `git status`
    deny execute rm *             commands where any part matches `rm *`
    ask execute git push*         always ask (even when a later rule or the policy would allow)
    allow notebook run_code       the notebook tool run_code (Python in the user's kernel)
    deny notebook                 every notebook tool that asks (run_code, cell edits, …)
    allow *                       anything (but see the safeguard)

A rule is ``ACTION KIND [PATTERN]``: the action ``allow``, ``deny`` or ``ask``; a tool
kind (``read``, ``edit``, ``delete``, ``move``, ``search``, ``execute``, ``think``,
``fetch``, ``switch_mode``, ``other``) or ``*`` for any; then an optional glob. Rules are
tried in order and the first that matches decides; when none does, the session's policy
decides as before.

``notebook`` is not a tool kind: it names the client's own notebook tools (the
``notebook`` MCP server in the user's kernel), by tool name (``allow notebook run_code``,
``allow notebook edit_*``). A notebook tool call also has its tool kind (``run_code`` is
``execute``, a cell edit ``edit``), so a rule of that kind without a pattern, or one with a
path glob matching its paths (a cell edit: the notebook), matches it too; a command
pattern never does (it runs Python, not a shell command).

What a pattern is matched against:

* ``execute`` — the shell command (:attr:`ToolCallState.command`: from ``rawInput``; the
  title when there is none). A command made of several (``a && b``, ``a | b``, ``$(…)``,
  ``sh -c '…'``) is allowed only when *every* part matches, and denied or asked when
  *any* part does: so ``allow execute pytest*`` does not allow ``pytest; rm -rf ~``.
  Deny and ask rules also see each part as it runs, wrappers and assignments looked
  through (``sudo /bin/rm``, ``FOO=1 rm``, ``env rm``, ``xargs rm`` are all ``rm``);
* ``fetch`` — the URL (:attr:`ToolCallState.url`, from ``rawInput``): a fetch whose URL
  only its title names matches no fetch pattern (the title is not what is fetched);
* any other kind — every file path of the call (:attr:`ToolCallState.paths`: diffs,
  locations, ``rawInput``, the files of its patches), each relative to the session's
  directory, both as named and with its symlinks resolved. An allow needs all of them
  to match (a call naming no path matches none); a deny or ask, any one.
  Globs work like ``.gitignore``: without a ``/`` they match the file name at any depth,
  with one they match from the session's directory; ``*`` stays within a directory and
  ``**`` crosses them. Paths outside the session's directory match only absolute globs.

Failing closed: a command the shell reader cannot read with certainty
(:attr:`ToolCallState.command_uncertainty`: ``$'…'`` quoting, ``${…}`` beyond a plain
variable, a quoted ``#``, heredocs, brace groups, functions, ``eval``, a command name the
shell expands, a wrapper option or shell flag it does not know, code given inline to an
interpreter, an assignment or a ``terminal/create`` ``env`` entry that changes what runs…)
is asked, whatever the rule: an allow rule that matches it asks, and so does a deny or ask
rule of its kind that it does not visibly match (it may be what that rule is about). An
allow rule also asks about writes by redirection (``> file``): no command pattern names
the file written.

The safeguard: a rule whose pattern is only wildcards (``allow *``, ``allow execute``,
``allow execute *``) never allows a command that :func:`~.danger.assess_command` rates
``danger`` — such a request is asked instead (rejected when no one can be asked), and
the transcript says why.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from .toolcall import ToolCallState

Action = Literal["allow", "deny", "ask"]
ACTIONS: tuple[Action, ...] = ("allow", "deny", "ask")
KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
    "notebook",
)
_WILDCARDS = frozenset("*?")


@dataclass(frozen=True)
class RuleMatch:
    """What a rule decided about one tool call."""

    action: Action
    #: The rule as written: "allow read".
    rule: str
    #: Why the decision is not what the rule says (the safeguard), for the transcript.
    note: str | None = None
    #: True when the safeguard turned an ``allow`` into ``ask``.
    safeguard: bool = False
    #: The rule's pattern is only wildcards (or absent): it names no path or command, so
    #: it never lets a protected write through (``guard.py``).
    wildcard: bool = field(default=False, compare=False)

    @property
    def by(self) -> str:
        """``decided_by`` of a request this rule decided: "rule `allow read`"."""
        return f"rule `{self.rule}`"


@dataclass(frozen=True)
class Rule:
    action: Action
    #: A tool kind, or "*" for any.
    kind: str
    #: Globs (paths: any of them per path; commands and URLs: exactly one).
    patterns: tuple[str, ...]
    text: str

    @property
    def wildcard_only(self) -> bool:
        """No pattern, or patterns made of nothing but wildcards (and slashes)."""
        return all(set(p) <= _WILDCARDS | {"/"} for p in self.patterns)

    def explain(self) -> str:
        """What the rule does, in a sentence fragment (for ``%acp --rules``)."""
        verb = {"allow": "allows", "deny": "denies", "ask": "always asks for"}[self.action]
        if self.kind == "notebook":
            tools = " or ".join(f"`{p}`" for p in self.patterns)
            return f"{verb} " + (f"the notebook tool {tools}" if tools else "every notebook tool")
        if not self.patterns or self.wildcard_only:
            what = {"*": "any tool call", "execute": "any command", "fetch": "any fetch"}.get(
                self.kind, f"every `{self.kind}` tool call"
            )
            if self.action == "allow" and self.kind in ("*", "execute"):
                what += ", except risky commands (those are asked)"
            return f"{verb} {what}"
        globs = " or ".join(f"`{p}`" for p in self.patterns)
        if self.kind == "execute":
            some = "matching" if self.action == "allow" else "with a part matching"
            what = f"commands {some} {globs}"
        elif self.kind == "fetch":
            what = f"fetches of URLs matching {globs}"
        elif self.kind == "*":
            what = f"tool calls whose command (or every file) matches {globs}"
        else:
            what = f"`{self.kind}` tool calls whose every file matches {globs}"
        return f"{verb} {what}"

    # ------------------------------------------------------------------ matching

    def applies_to(self, call: ToolCallState) -> bool:
        """The rule is about calls of ``call``'s kind (whatever its pattern says)."""
        if self.kind == "notebook":
            return call.notebook_tool is not None
        return self.kind == "*" or call.kind == self.kind

    def matches(self, call: ToolCallState, cwd: str) -> bool:
        if self.kind == "notebook":
            tool = call.notebook_tool
            return tool is not None and (
                not self.patterns or any(_fnmatch(tool, p) for p in self.patterns)
            )
        if self.kind != "*" and call.kind != self.kind:
            return False
        if not self.patterns:
            return True
        command = call.command
        if self.kind == "execute" or (self.kind == "*" and command is not None):
            return command is not None and self._matches_command(command)
        if self.kind == "fetch":
            url = call.url
            return url is not None and _fnmatch(url, self.patterns[0])
        # Every path as named and as it resolves (a `.py` link to a file elsewhere is
        # the file elsewhere): an allow needs all of them, a deny or ask any one.
        paths = call.paths
        real_cwd = _real(cwd)
        forms = [(p, cwd) for p in paths] + [(_real(p, cwd), real_cwd) for p in paths]
        if self.action == "allow":
            return bool(paths) and all(self._matches_path(p, base) for p, base in forms)
        return any(self._matches_path(p, base) for p, base in forms)

    def _matches_command(self, command: str) -> bool:
        from .shell import command_forms, command_parts  # here: PermissionRules.match says why

        pattern = _squash(self.patterns[0])
        if self.action == "allow":
            # Every part as written, so a wildcard never hides a second command.
            parts = [_squash(p) for p in command_parts(command)] or [_squash(command)]
            return all(_fnmatch(part, pattern) for part in parts)
        # Any part, as written or as it runs (`sudo /bin/rm -rf x` is `rm -rf x`).
        forms = [_squash(command), *(_squash(f) for f in command_forms(command))]
        return any(_fnmatch(form, pattern) for form in forms)

    def _matches_path(self, path: str, cwd: str) -> bool:
        relative = _relative(path, cwd)
        for pattern in self.patterns:
            absolute = os.path.isabs(os.path.expanduser(pattern))
            if relative is None:
                # Outside the session's directory: only an absolute glob can match.
                if absolute and _glob_match(
                    os.path.normpath(os.path.expanduser(pattern)), os.path.abspath(path)
                ):
                    return True
            elif absolute:
                if _glob_match(
                    os.path.normpath(os.path.expanduser(pattern)),
                    os.path.normpath(os.path.join(cwd, relative)),
                ):
                    return True
            else:
                if pattern.startswith("./"):
                    pattern = pattern[2:]
                if pattern.endswith("/"):
                    pattern += "**"  # a directory: everything under it
                if "/" in pattern:
                    if _glob_match(pattern, relative):
                        return True
                elif _glob_match(pattern, os.path.basename(relative)):
                    return True  # no slash: the file name, at any depth (.gitignore)
        return False


class PermissionRules:
    """Rules in order; :meth:`match` returns what the first matching one says.

    One object is shared by everything that applies the rules (every session's broker of
    a notebook, say): :meth:`replace` changes the rules in place, so they are never copied
    and kept in sync by hand. An empty set matches nothing.
    """

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        #: A tuple, swapped whole by :meth:`replace`: a match running on another thread
        #: reads either the old rules or the new ones, never a mix.
        self.rules: tuple[Rule, ...] = tuple(rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __repr__(self) -> str:
        return f"PermissionRules({self.texts!r})"

    @property
    def texts(self) -> list[str]:
        return [rule.text for rule in self.rules]

    @classmethod
    def parse(cls, lines: str | Iterable[str | Rule]) -> PermissionRules:
        """Rules from lines (a string: one rule per line or ``;``-separated); blank lines
        and ``#`` comments are skipped. A malformed rule raises :class:`ValueError` with
        one sentence."""
        return cls(_parse_lines(lines))

    def replace(self, rules: str | Iterable[str | Rule]) -> None:
        """Use ``rules`` from now on (lines as :meth:`parse` reads them, parsed rules, or
        another :class:`PermissionRules`), in one step: every holder of this object sees
        the new rules at once. A malformed rule raises :class:`ValueError` and changes
        nothing; a request already decided keeps its decision."""
        self.rules = tuple(_parse_lines(rules))

    def match(self, call: ToolCallState, cwd: str) -> RuleMatch | None:
        """What the first rule that matches ``call`` says (None: no rule matches)."""
        # The shell reader and the risk rating are imported where a command is read, not
        # with the module: every session makes its rules, most turns run no command.
        from .danger import assess_command
        from .shell_writes import redirect_writes

        command = call.command
        doubt: str | None = None
        for rule in self.rules:
            reads_command = command is not None and rule.kind in ("*", "execute")
            if reads_command and doubt is None:
                doubt = call.command_uncertainty or ""
            if not rule.matches(call, cwd):
                if reads_command and doubt and rule.action != "allow" and rule.applies_to(call):
                    # A deny or ask rule that a command it cannot read might escape
                    # (`$(echo rm) -rf x` and `deny execute rm *`) asks, never lets it pass.
                    return RuleMatch(
                        "ask",
                        rule.text,
                        note=f"rule `{rule.text}` cannot be checked against a command it "
                        f"cannot read with certainty ({doubt})",
                        safeguard=True,
                    )
                continue
            if rule.action == "allow" and reads_command and command is not None:
                if doubt:
                    # Fail closed: what cannot be read with certainty is asked.
                    return RuleMatch(
                        "ask",
                        rule.text,
                        note=f"rule `{rule.text}` does not cover a command it cannot read "
                        f"with certainty ({doubt})",
                        safeguard=True,
                    )
                writes = redirect_writes(command)
                if writes:
                    return RuleMatch(
                        "ask",
                        rule.text,
                        note=f"rule `{rule.text}` does not cover writes by redirection "
                        f"({', '.join(f'`{w}`' for w in writes)})",
                        safeguard=True,
                    )
            if rule.action == "allow" and rule.wildcard_only:
                danger = assess_command(command) if command else None
                if danger is not None and danger.level == "danger":
                    return RuleMatch(
                        "ask",
                        rule.text,
                        note=f"rule `{rule.text}` does not cover risky commands",
                        safeguard=True,
                    )
            return RuleMatch(rule.action, rule.text, wildcard=rule.wildcard_only)
        return None

    def describe(self, policy: str | None = None) -> list[str]:
        """The rules in order, with what each does (``%acp --rules``)."""
        fallback = f"the session's policy ({policy})" if policy else "the session's policy"
        if not self.rules:
            return [f"No permission rules: {fallback} decides every request."]
        lines = ["Permission rules (the first that matches decides):"]
        for number, rule in enumerate(self.rules, 1):
            lines.append(f"  {number}. {rule.text} — {rule.explain()}")
        lines.append(f"When none matches, {fallback} decides.")
        if any(r.kind in ("execute", "*") and r.patterns for r in self.rules):
            lines.append(
                "A chained command (a && b, a | b, $(…), sh -c '…') is allowed only when every "
                "part matches, and denied or asked when any part does. A command the client "
                "cannot read with certainty (${x:=…}, $(echo rm), python -c '…', an env entry "
                "such as LD_PRELOAD) is asked, whatever the rules say."
            )
        if any(r.action == "allow" and r.wildcard_only for r in self.rules):
            lines.append(
                "Safeguard: a rule that is only wildcards never allows a risky command "
                "(rm -rf, sudo, curl | sh, …); it is asked instead, or rejected when no one can be asked."
            )
        return lines


def _parse_lines(lines: str | Iterable[str | Rule]) -> list[Rule]:
    if isinstance(lines, str):
        lines = split_rules(lines)
    rules = []
    for line in lines:
        if isinstance(line, Rule):
            rules.append(line)
            continue
        if not isinstance(line, str):
            raise ValueError(f"A permission rule is a string, not {type(line).__name__}.")
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        rules.append(parse_rule(text))
    return rules


def split_rules(text: str) -> list[str]:
    """Rules from one string (an environment variable): separated by ``;`` or newlines."""
    return [part.strip() for part in re.split(r"[;\n]", text) if part.strip()]


def parse_rule(text: str) -> Rule:
    """One rule from its text; :class:`ValueError` with one sentence when malformed."""
    text = " ".join(text.split())
    head, _, rest = text.partition(" ")
    action = head.lower()
    if action not in ACTIONS:
        raise ValueError(
            f"The permission rule `{text}` must start with allow, deny or ask, not `{head}`."
        )
    rest = rest.strip()
    if not rest:
        raise ValueError(
            f"The permission rule `{text}` needs a tool kind after `{action}` "
            f"({', '.join(KINDS)}, or * for any)."
        )
    kind_word, _, pattern_text = rest.partition(" ")
    kind = kind_word.lower()
    if kind != "*" and kind not in KINDS:
        raise ValueError(
            f"The permission rule `{text}` names an unknown tool kind `{kind_word}`; "
            f"use one of {', '.join(KINDS)}, or * for any."
        )
    pattern_text = pattern_text.strip()
    patterns: tuple[str, ...] = ()
    if pattern_text:
        if kind in ("execute", "fetch", "*") and not _quoted(pattern_text):
            patterns = (pattern_text,)
        else:
            try:
                words = shlex.split(pattern_text)
            except ValueError:
                raise ValueError(f"The permission rule `{text}` has an unclosed quote.") from None
            if kind in ("execute", "fetch", "*"):
                if len(words) != 1:
                    raise ValueError(
                        f"The permission rule `{text}` has text after its quoted pattern; "
                        "quote the whole command or none of it."
                    )
                patterns = (words[0],)
            else:
                patterns = tuple(words)
        if not all(patterns):
            raise ValueError(f"The permission rule `{text}` has an empty pattern.")
    return Rule(cast(Action, action), kind, patterns, text)


# ---------------------------------------------------------------------------- helpers


def _quoted(text: str) -> bool:
    return len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'"


def _squash(text: str) -> str:
    return " ".join(text.split())


def _fnmatch(text: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(text, pattern)


def _real(path: str, cwd: str = "") -> str:
    """``path`` (relative to ``cwd``) with every symlink resolved; as given when it cannot be."""
    try:
        return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    except (OSError, ValueError):
        return path


def _relative(path: str, cwd: str) -> str | None:
    """``path`` relative to ``cwd`` ("a/b.py"), or None when it lies outside."""
    absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    base = os.path.normpath(cwd)
    try:
        if os.path.commonpath([absolute, base]) != base:
            return None
    except ValueError:
        return None
    relative = os.path.relpath(absolute, base)
    return None if relative == "." else relative


def _glob_match(pattern: str, path: str) -> bool:
    """``*`` and ``?`` stay within one directory, ``**`` crosses directories (``a/**`` is
    everything under ``a``), ``[…]`` is a class; dotfiles match like any file."""
    # Imported on the first path rule matched: wcmatch compiles a few dozen patterns as it
    # is imported, which a turn without path rules (every `acp-notebook run` by default)
    # should not pay for.
    from wcmatch import glob

    return glob.globmatch(path, pattern, flags=glob.GLOBSTAR | glob.DOTGLOB)
