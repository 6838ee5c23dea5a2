"""The data model: frozen dataclasses in every observable way."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from toolfind import models

# The models write their own __init__ (generated methods cost start-up, see models.py); each
# must behave exactly as @dataclass(frozen=True, slots=True) with the same fields would.

FROZEN_CLASSES = [
    c
    for c in vars(models).values()
    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == models.__name__
]
DATACLASS_METHODS = {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"}
DATACLASS_METHODS |= {"__getstate__", "__setstate__", "__match_args__", "__dataclass_fields__"}


def reference(cls: type) -> type:
    """The same fields through the real @dataclass(frozen=True, slots=True)."""
    specs = []
    for f in dataclasses.fields(cls):
        options = {"compare": f.compare, "repr": f.repr, "hash": f.hash}
        if f.default is not dataclasses.MISSING:
            options["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            options["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**options)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True, slots=True)


def sample_values(cls: type, seed: str) -> dict[str, Any]:
    return {f.name: f"{seed}-{f.name}" for f in dataclasses.fields(cls)}


def outcome(action: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """What calling ``action(*args)`` gives: its value or its exception."""
    try:
        return ("value", action(*args))
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception itself
        return (type(exc).__name__, str(exc))


def test_the_frozen_classes_are_all_found() -> None:
    names = {c.__name__ for c in FROZEN_CLASSES}
    assert {
        "Tool",
        "Source",
        "ScoringParams",
        "FieldWeights",
        "Hit",
        "LoadResult",
        "Signals",
    } <= names
    assert len(FROZEN_CLASSES) == 12


@pytest.mark.parametrize("cls", FROZEN_CLASSES, ids=lambda c: c.__name__)
def test_frozen_dataclass_behaves_as_the_generated_dataclass(cls: type) -> None:
    ref = reference(cls)
    params = inspect.signature(cls).parameters.values()
    assert [str(p) for p in params] == [str(p) for p in inspect.signature(ref).parameters.values()]
    assert cls.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    assert cls.__slots__ == ref.__slots__  # type: ignore[attr-defined]
    assert DATACLASS_METHODS <= set(vars(cls)) & set(vars(ref))
    ours, theirs = cls(**sample_values(cls, "a")), ref(**sample_values(cls, "a"))
    other, other_ref = cls(**sample_values(cls, "b")), ref(**sample_values(cls, "b"))
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs)
    assert ours == cls(**sample_values(cls, "a")) and ours != other
    assert theirs != other_ref
    for f in dataclasses.fields(cls):  # which fields take part in == and hash()
        changed = sample_values(cls, "a") | {f.name: "changed"}
        assert (ours == cls(**changed)) is (theirs == ref(**changed)), f.name
        assert (hash(ours) == hash(cls(**changed))) is (hash(theirs) == hash(ref(**changed)))
    assert ours.__eq__(theirs) is NotImplemented  # another class, as generated __eq__ does
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert dataclasses.replace(ours) == ours and dataclasses.astuple(ours) == dataclasses.astuple(
        theirs
    )
    name = dataclasses.fields(cls)[0].name
    assert outcome(setattr, ours, name, 1) == outcome(setattr, theirs, name, 1)
    assert outcome(delattr, ours, name) == outcome(delattr, theirs, name)
    # Another name: the generated methods call super() on the class from before slots were
    # added, a TypeError on CPython 3.11; ours say what happened. Both refuse.
    assert outcome(setattr, ours, "nope", 1) == (
        "FrozenInstanceError",
        "cannot assign to field 'nope'",
    )
    assert outcome(delattr, ours, "nope") == ("FrozenInstanceError", "cannot delete field 'nope'")
    assert outcome(setattr, theirs, "nope", 1)[0] != "value"
    if all(p.default is not p.empty for p in params):
        assert repr(cls()) == repr(ref())
        assert outcome(hash, cls()) == outcome(hash, ref())
        fresh = [
            f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING
        ]
        assert all(getattr(cls(), n) is not getattr(cls(), n) for n in fresh)


def test_a_tool_with_default_mappings_is_equal_but_unhashable_like_before() -> None:
    tool = models.Tool("read_file")
    assert tool == models.Tool("read_file")
    assert tool.parameters == {"type": "object", "properties": {}}
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(tool)
    assert models.Tool("x", parameters=None).parameters is None  # given, even if None
    moved = models.Tool("x", source=models.Source("b"))
    assert models.Tool("x", source=models.Source("a")) == moved  # source is not compared
