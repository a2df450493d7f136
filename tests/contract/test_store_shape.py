"""Every backend offers every method of every storage port with the port's parameters, and
the backends' front doors export what they say (a new name there is a decision, not a leak)."""

from __future__ import annotations

import inspect

import pytest

import memory.stores.memory_store as memory_store
import memory.stores.sqlite as sqlite_store
from memory import ports
from memory.ports import storage

from tests.contract.support import store  # noqa: F401 (every backend in turn)

PORTS = {"identities": ports.IdentityStore, "conversations": ports.ConversationStore,
         "deliveries": ports.DeliveryStore, "facts": ports.FactStore,
         "episodes": ports.EpisodeStore, "work": ports.WorkQueue,
         "privacy": ports.PrivacyStore, "records": ports.RecordStore,
         "questions": ports.QuestionStore}


def _methods(protocol) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(fn) for name, fn in vars(protocol).items()
            if inspect.iscoroutinefunction(fn) and not name.startswith("_")}


def test_the_store_port_names_every_port():
    assert {n for n in ports.Store.__annotations__ if n != "path"} == set(PORTS)


@pytest.mark.parametrize("attribute", sorted(PORTS))
async def test_each_backend_offers_the_ports_methods_with_their_parameters(store, attribute):
    port = getattr(store, attribute)
    for name, wanted in _methods(PORTS[attribute]).items():
        have = inspect.signature(getattr(port, name))
        assert list(have.parameters) == [p for p in wanted.parameters if p != "self"], (
            attribute, name)
    for name in _methods(ports.Store):
        assert inspect.iscoroutinefunction(getattr(store, name)), name
    assert isinstance(store, ports.Store)


def test_the_front_doors_export_what_they_say():
    assert sqlite_store.__all__ == ["SQLiteStore", "WAL_CHECKPOINT_PAGES", "WAL_SIZE_LIMIT_BYTES"]
    assert memory_store.__all__ == ["InMemoryStore"]
    assert set(storage.__all__) <= set(ports.__all__)
