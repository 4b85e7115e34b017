"""Resolving ``--model`` / ``--judge-model`` strings to an installed backend and a model.

One grammar for both flags:

* ``backend:model``: split on the first ``:`` (``codex:gpt-5.5``, ``hermes:openrouter/x``);
* a bare backend id or alias: ``codex``, ``claude`` (alias of ``claude-code``);
* a bare model name: the installed backend that claims it, else the default backend
  (a name one typo away from a backend id is refused as a typo, with a did-you-mean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caliper.errors import PluginNotFound
from caliper.host.catalogue import KNOWN_DISTRIBUTIONS, install_command
from caliper.host.plugins import BACKENDS, PluginHost, installed
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend

DEFAULT_BACKEND = "claude-code"


@attrs_classes.frozen
class Engine:
    """A resolved engine: the backend object and the model asked for (``None``: its default)."""

    backend: Backend
    model: str | None
    requested: str | None = None

    @property
    def backend_id(self) -> str:
        return self.backend.id

    @property
    def label(self) -> str:
        return f"{self.backend.id}:{self.model}" if self.model else self.backend.id


def _unknown_backend(host: PluginHost, asked: str, flag: str, backend_name: str) -> PluginNotFound:
    import difflib

    backends = host.backends()
    names = sorted({*backends, *(a for b in backends.values() for a in b.aliases)})
    candidates = names + [n for n in KNOWN_DISTRIBUTIONS if n not in names]
    bare_model = asked != backend_name and ":" not in asked
    if bare_model:
        # A bare name that is neither a backend nor a model an installed backend claims was
        # taken as a model of the default backend; say so instead of blaming the user.
        close = difflib.get_close_matches(asked, candidates, n=1, cutoff=0.6)
        lines = [
            f"{flag} {asked!r}: no installed backend is called that or claims that model, so it "
            f"was taken as a model of the default backend {backend_name!r}, which is not "
            "installed. Use BACKEND or BACKEND:MODEL to pick an installed backend."
        ]
    else:
        close = difflib.get_close_matches(backend_name, candidates, n=1, cutoff=0.6)
        lines = [f"{flag} {asked!r}: no installed backend is called {backend_name!r}."]
    if close and close[0] != backend_name:
        lines.append(f"Did you mean {close[0]!r}?")
    entries = {e.name: e for e in installed(BACKENDS)}
    if backends:
        lines.append("Installed backends:")
        for ident, backend in sorted(backends.items()):
            entry = entries.get(ident)
            version = f" ({entry.distribution} {entry.version})" if entry else ""
            aliases = f" [aliases: {', '.join(backend.aliases)}]" if backend.aliases else ""
            lines.append(f"  {ident}{aliases}{version}")
    else:
        lines.append("No backend plugin is installed.")
    command = install_command(backend_name) or (install_command(close[0]) if close else None)
    hint = None
    if command and backend_name in KNOWN_DISTRIBUTIONS:
        hint = f"The {backend_name} backend is not installed. Install it with: {command}"
    for failure in host.failures:
        if failure.entry.group == BACKENDS:
            lines.append(f"Failed to load {failure.entry.name}: {failure.error}")
    return PluginNotFound("\n".join(lines), hint=hint)


def resolve_engine(host: PluginHost, text: str | None, *, flag: str = "--model") -> Engine:
    """Resolve an engine string against the installed backends (see module docstring)."""
    text = (text or "").strip() or None
    if text is None:
        return _by_backend_name(host, DEFAULT_BACKEND, None, text, flag)
    if ":" in text:
        backend_name, model = text.split(":", 1)
        return _by_backend_name(host, backend_name.strip(), model.strip() or None, text, flag)
    names = host.backend_names()
    if text in names:  # an id or alias: only that backend is imported
        return _by_backend_name(host, names[text], None, text, flag)
    backends = host.backends()
    if text in backends:  # registered directly (caliper.run(plugins=...)), no entry point
        return _by_backend_name(host, text, None, text, flag)
    for backend in backends.values():
        if text in backend.aliases:  # an alias its backend declares but its metadata does not
            return Engine(backend, None, text)
    if text in KNOWN_DISTRIBUTIONS and text not in backends:
        raise _unknown_backend(host, text, flag, text)
    for backend in backends.values():
        if backend.claims_model(text):
            return Engine(backend, text, text)
    _refuse_backend_typo(backends, text, flag)
    return _by_backend_name(host, DEFAULT_BACKEND, text, text, flag)


def _refuse_backend_typo(backends: dict[str, Backend], text: str, flag: str) -> None:
    """A bare name one typo away from a backend is far likelier a typo than a model name."""
    names = sorted(
        {*backends, *(a for b in backends.values() for a in b.aliases), *KNOWN_DISTRIBUTIONS}
    )
    import difflib

    close = difflib.get_close_matches(text, names, n=1, cutoff=0.75)
    if close:
        raise PluginNotFound(
            f"{flag} {text!r}: no backend is called {text!r}. Did you mean {close[0]!r}?",
            hint=f"To use {text!r} as a model of the default backend, write "
            f"{flag} {DEFAULT_BACKEND}:{text}.",
        )


def _broken_backend(host: PluginHost, name: str, *, flag: str, asked: str) -> PluginNotFound | None:
    """The error for a backend that is installed but failed to load, else ``None``."""
    for failure in host.failures:
        if failure.entry.group == BACKENDS and failure.entry.name == name:
            return PluginNotFound(
                f"{flag} {asked!r}: the backend {name!r} is installed but cannot be used: "
                f"{failure.error}",
                hint="Fix or uninstall that plugin (`caliper plugins` lists what failed).",
            )
    return None


def find_backend(host: PluginHost, name: str, *, flag: str, asked: str | None = None) -> Backend:
    """The installed backend whose id or alias is ``name``, else one clear PluginNotFound."""
    name = host.backend_names().get(name, name)
    backends = host.backends([name])
    if name in backends:
        return backends[name]
    broken = _broken_backend(host, name, flag=flag, asked=asked or name)
    if broken is not None:
        raise broken
    for backend in host.backends().values():
        if name == backend.id or name in backend.aliases:
            return backend
    raise _unknown_backend(host, asked or name, flag, name)


def _by_backend_name(
    host: PluginHost, name: str, model: str | None, asked: str | None, flag: str
) -> Engine:
    try:
        return Engine(find_backend(host, name, flag=flag, asked=asked), model, asked)
    except PluginNotFound as exc:
        if asked is not None:
            raise
        # The flag was not given: do not quote a name the user never typed.
        lines = exc.message.split("\n")
        lines[0] = (
            f"No {flag} was given, so the default backend {name!r} was picked, and it is not "
            f"installed. Pass {flag} BACKEND or BACKEND:MODEL to use an installed backend."
        )
        raise PluginNotFound("\n".join(lines), hint=exc.hint) from None
