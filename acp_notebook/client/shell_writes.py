"""The files a shell command line writes, as far as its words say: what its redirections
write (``>``, ``>>``, ``>|``, ``&>``, ``2>``…) and what the programs that name their
outputs change — ``cp``/``mv``/``install``/``ln``/``rsync`` destinations (also the file a
copy lands on inside a destination directory, and what ``mv`` takes away), ``tee``'s
files, ``dd of=``, ``touch``, ``truncate``, ``mkdir``, ``sed -i``'s files, what ``rm``/
``unlink``/``shred`` remove, what ``chmod``/``chown`` change, ``curl -o``, ``wget -O``,
``sort -o``, and the directories ``tar -C`` and ``unzip -d`` extract into.

This is what the client's protected paths (a notebook, ``.git/``, the notebook settings,
the state directory) are checked against, so a terminal cannot write them behind the
rules' back. Paths are resolved against the directory the command runs in, and against
every directory a literal ``cd``/``pushd`` in the line may move it to (a target could be
written from any of them: all are listed). A path the shell expands (``$X``, a glob,
braces) cannot be resolved: it is not listed here, and :func:`~.shell.uncertain` names it
instead. Programs that write files of their own choosing (``python``, ``git``, ``make``)
are not read here: this is what a command line *names* as written, not all it can do.
"""

from __future__ import annotations

import os

from .shell import CommandPart, is_expanded, is_harmless_target, positional, walk

__all__ = ["redirect_writes", "write_targets", "written_words"]

#: Programs whose last operand is the destination (the others are read), with the options
#: that name the destination directory instead.
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync"})
_TARGET_DIRECTORY = ("-t", "--target-directory")
#: Programs whose every operand is a file they change.
_CHANGES_EACH = frozenset({"tee", "touch", "truncate", "rm", "unlink", "shred", "rmdir", "mkdir"})
#: Programs with options whose value is a file (or directory) they write.
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "curl": ("-o", "--output"),
    "wget": ("-O", "--output-document", "-P", "--directory-prefix"),
    "sort": ("-o", "--output"),
    "tar": ("-C", "--directory"),
    "unzip": ("-d",),
}
#: Programs whose first operand is a mode or owner, the rest files they change.
_CHANGES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})


def written_words(argv: list[str], *, landed: bool = True) -> list[str]:
    """The words of ``argv`` (what runs, wrappers looked through) that name a file it
    writes, creates, moves or removes, as written (not resolved). ``landed``: also the
    file a copy would be inside a destination that is a directory (``cp a d`` → ``d/a``),
    for a check that must not miss it; a person is shown the destination alone."""
    if not argv:
        return []
    name = os.path.basename(argv[0])
    args = positional(argv)
    if name in _COPIERS:
        return _copy_targets(name, argv, args, landed)
    if name in _CHANGES_EACH:
        return args
    if name in _CHANGES_AFTER_FIRST:
        return args[1:]
    if name == "dd":
        return [w[3:] for w in argv[1:] if w.startswith("of=")]
    if name in _OUTPUT_OPTIONS:
        return _option_values(argv, _OUTPUT_OPTIONS[name])
    if name == "sed" and any(w.startswith(("-i", "--in-place")) for w in argv[1:]):
        scripted = any(w in ("-e", "-f") or w.startswith(("--expression", "--file")) for w in argv)
        return args if scripted else args[1:]
    return []


def _option_values(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """The values of ``options`` in ``argv``: ``-o F``, ``-oF``, ``--output F``, ``--output=F``."""
    found = []
    for index, word in enumerate(argv[1:], 1):
        for option in options:
            if word == option and index + 1 < len(argv):
                found.append(argv[index + 1])
            elif option.startswith("--") and word.startswith(option + "="):
                found.append(word.partition("=")[2])
            elif not option.startswith("--") and word.startswith(option) and len(word) > 2:
                found.append(word[2:])
    return found


def _copy_targets(name: str, argv: list[str], args: list[str], landed: bool) -> list[str]:
    directory = None
    for index, word in enumerate(argv[1:], 1):
        if word in _TARGET_DIRECTORY and index + 1 < len(argv):
            directory = argv[index + 1]
        elif word.startswith("--target-directory="):
            directory = word.partition("=")[2]
        elif word.startswith("-t") and not word.startswith("--") and len(word) > 2:
            directory = word[2:]
    sources = [a for a in args if a != directory]
    if directory is None:
        if name == "install" and any(w in ("-d", "--directory") for w in argv[1:]):
            return args
        if len(args) == 1 and name == "ln":
            return [os.path.basename(args[0].rstrip("/"))]
        if len(args) < 2:
            return []
        directory, sources = args[-1], args[:-1]
    if name == "rsync" and _is_remote(directory):
        return []
    inside = [os.path.join(directory, os.path.basename(s.rstrip("/"))) for s in sources]
    removed = sources if name == "mv" else []
    return [directory, *(inside if landed else []), *removed]


def _is_remote(path: str) -> bool:
    head = path.split("/", 1)[0]
    return "://" in path or (":" in head and not path.startswith("/"))


def redirect_writes(command: str) -> list[str]:
    """The files ``command``'s redirections write, as written (``/dev/null``, ``&2`` left
    out): a write no ``execute`` pattern can name, so an allow rule asks about it."""
    found = [t for part in walk(command) for t in part.cmd.writes if not is_harmless_target(t)]
    return list(dict.fromkeys(found))


def write_targets(command: str, cwd: str) -> list[str]:
    """Every file ``command`` names as written (see the module docstring), as absolute,
    normalised paths (symlinks not resolved), each once, in order. ``cwd`` is the
    directory the command runs in."""
    parts = walk(command)
    directories = _directories(parts, cwd)
    found: list[str] = []
    for part in parts:
        words = [*part.cmd.writes, *written_words(part.unwrapped.argv)]
        for word in words:
            if not word or is_harmless_target(word) or is_expanded(word.lstrip("~")):
                continue
            found += _resolved(word, directories)
    return list(dict.fromkeys(found))


def _directories(parts: list[CommandPart], cwd: str) -> list[str]:
    """``cwd`` and every directory a literal ``cd``/``pushd`` of the line may lead to."""
    found = [os.path.normpath(cwd)]
    for part in parts:
        argv = part.unwrapped.argv
        if not argv or os.path.basename(argv[0]) not in ("cd", "pushd"):
            continue
        args = [a for a in positional(argv) if a != "-"]
        target = args[0] if args else "~"
        if is_expanded(target.lstrip("~")):
            continue  # uncertain() names it
        found += [p for base in list(found) for p in _resolved(target, [base])]
    return list(dict.fromkeys(found))


def _resolved(word: str, directories: list[str]) -> list[str]:
    """``word`` as a path from each directory; a leading ``~`` both as home and as a
    name (quotes are gone by now: ``'~'`` is a directory named ``~``)."""
    forms = [word]
    if word.startswith("~"):
        forms.append(os.path.expanduser(word))
    out = []
    for form in forms:
        if os.path.isabs(form):
            out.append(os.path.normpath(form))
        else:
            out += [os.path.normpath(os.path.join(base, form)) for base in directories]
    return out
