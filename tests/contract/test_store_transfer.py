"""Export and import: a user's rows, loaded into another store of any backend as a new user,
read back as the same export document (ids aside)."""

from __future__ import annotations

import pytest

from memory.errors import StoreError
from memory.portability import build_document, parse_document
from memory.types import ChatKind

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import BACKENDS, Chat, at
from tests.contract.test_store_privacy import consolidate


async def _a_user_with_everything(store) -> Chat:
    ada = await Chat.open(store)
    said = await ada.say("I live in Graz", pmid="1")
    await ada.reply("Graz is lovely.")
    old = await ada.fact("The user lives in Graz", turn=said, topic="home")
    await consolidate(ada, said.session_id,
                      await store.conversations.session_turns(said.session_id))
    moved = await ada.say("I moved to Linz")
    await ada.fact("The user lives in Linz", turn=moved, topic="home", supersedes=[old.id],
                   valid_from=at(50))
    group = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    await group.say("hello club")
    await store.identities.set_timezone(ada.user.id, "Europe/Vienna")
    return ada


def _without_ids(doc: dict) -> dict:
    """The document with every id and id reference replaced by its rank in the document, and
    the export time left out."""
    rank: dict[str, dict[int, int]] = {}
    for section in ("facts", "episodes", "rounds", "turns", "sessions", "threads"):
        rank[section] = {r["id"]: n for n, r in enumerate(doc[section]) if "id" in r}

    def turns(ids):
        return [rank["turns"].get(i, -1) for i in ids]

    out = {"user": {k: v for k, v in doc["user"].items() if k != "id"}}
    refs = {"thread_id": "threads", "session_id": "sessions", "origin_thread_id": "threads"}
    for section in rank:
        rows = []
        for r in doc[section]:
            r = {k: v for k, v in r.items() if k not in ("id", "user_id", "scope")}
            if section == "sessions":  # an open session is imported closed
                r.pop("closed_at"), r.pop("close_reason")
            for key, target in refs.items():
                if key in r:
                    r[key] = rank[target][r[key]]
            for key in ("turn_ids", "source_turn_ids"):
                if key in r:
                    r[key] = turns(r[key])
            for key in ("supersedes",):
                if key in r:
                    r[key] = [rank["facts"][i] for i in r[key]]
            if r.get("superseded_by") is not None:
                r["superseded_by"] = rank["facts"][r["superseded_by"]]
            if "key_data" in r:
                r["key_data"] = [[t, rank["turns"].get(i, -1)] for t, i in r["key_data"]]
            rows.append(r)
        out[section] = rows
    return out


@pytest.mark.parametrize("target", sorted(BACKENDS))
async def test_an_export_loads_into_any_backend_and_reads_back_the_same(store, target,
                                                                        tmp_path, request):
    ada = await _a_user_with_everything(store)
    doc = build_document(await store.privacy.user_rows(ada.user.id), at(100))
    assert [f["text"] for f in doc["facts"]] == ["The user lives in Graz",
                                                 "The user lives in Linz"]
    assert doc["facts"][0]["superseded_by"] == doc["facts"][1]["id"]
    folder = tmp_path / "target"
    folder.mkdir()
    other = await BACKENDS[target](folder, request)
    try:
        await Chat.open(other, "someone else")  # ids here differ from the exporting store's
        uid = await other.privacy.load_user_rows(parse_document(doc), at(200))
        again = build_document(await other.privacy.user_rows(uid), at(300))
        assert _without_ids(again) == _without_ids(doc)
        user = await other.identities.find_user("console", "ada")
        assert user.id == uid and user.timezone == "Europe/Vienna"
        assert all(s["closed_at"] for s in again["sessions"])  # open sessions come closed
        with pytest.raises(StoreError):  # the account exists now
            await other.privacy.load_user_rows(parse_document(doc), at(400))
    finally:
        await other.close()


async def test_an_import_into_another_users_private_chat_is_refused_whole(store):
    ada = await _a_user_with_everything(store)
    doc = build_document(await store.privacy.user_rows(ada.user.id), at(100))
    doc["user"]["accounts"] = [{"platform": "console", "platform_user_id": "eve"}]
    with pytest.raises(StoreError, match="belongs to another user"):
        await store.privacy.load_user_rows(parse_document(doc), at(200))
    assert await store.identities.find_user("console", "eve") is None


async def test_deleting_a_forgotten_user_leaves_the_others(store):
    ada = await _a_user_with_everything(store)
    bob = await Chat.open(store, "bob")
    bobs = await bob.fact("The user keeps goats", turn=await bob.say("I keep goats"))
    await store.privacy.forget_all(ada.user.id, at(500))
    await store.privacy.delete_user(ada.user.id, at(501))
    assert await store.identities.find_user("console", "ada") is None
    assert await store.identities.get_user(ada.user.id) is None
    assert [f.id for f in await store.facts.active_facts(bob.user.id, bob.scope)] == [bobs.id]
    assert (await store.identities.find_user("console", "bob")).id == bob.user.id
