"""Splitting, neutralising and paging reply text for Discord (pure functions)."""

from __future__ import annotations

from adapters.discord import MESSAGE_LIMIT, neutralise, split_message
from adapters.discord._text import pages


def test_short_text_is_one_message_and_blank_text_none():
    assert split_message("hello") == ["hello"]
    assert split_message("\n\n  \n") == []


def test_paragraphs_are_kept_whole_when_they_fit():
    paragraphs = [f"{n} " + "word " * 70 for n in range(20)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    chunks = split_message(text)
    assert all(len(c) <= MESSAGE_LIMIT for c in chunks)
    assert "\n\n".join(chunks) == text
    assert all(c.split(" ", 1)[0].isdigit() for c in chunks)  # every chunk starts a paragraph


def test_text_without_spaces_is_cut_hard_and_nothing_is_lost():
    text = "记" * 4500
    chunks = split_message(text)
    assert [len(c) for c in chunks] == [2000, 2000, 500]
    assert "".join(chunks) == text


def test_a_long_line_is_cut_at_spaces():
    text = " ".join(f"w{n}" for n in range(1500))
    chunks = split_message(text)
    assert all(len(c) <= MESSAGE_LIMIT and not c.startswith(" ") for c in chunks)
    assert " ".join(chunks) == text


def test_a_cut_code_block_is_closed_and_reopened_with_its_language():
    code = "```python\n" + "\n".join(f"x_{n} = {n}" for n in range(400)) + "\n```"
    chunks = split_message("Intro\n\n" + code + "\n\nOutro")
    assert len(chunks) > 1
    for n, chunk in enumerate(chunks):
        assert len(chunk) <= MESSAGE_LIMIT
        assert chunk.count("```") % 2 == 0
        if 0 < n < len(chunks) - 1:
            assert chunk.startswith("```python\n") and chunk.endswith("\n```")
    assert chunks[-1].endswith("Outro")


def test_tilde_fences_are_closed_with_tildes():
    code = "~~~\n" + "\n".join("line of text number %d" % n for n in range(200)) + "\n~~~"
    chunks = split_message(code)
    assert chunks[0].endswith("\n~~~") and chunks[1].startswith("~~~\n")


def test_mass_mentions_are_broken():
    assert neutralise("hi @everyone and @here") == "hi @\u200beveryone and @\u200bhere"
    assert neutralise("mail me at a@b.org, @Ana") == "mail me at a@b.org, @Ana"


def test_pages_hold_at_most_fifteen_lines():
    listing = "\n".join(f"{n}. fact {n}" for n in range(1, 41))
    result = pages(listing)
    assert [len(p.split("\n")) for p in result] == [15, 15, 10]
    assert result[1].startswith("16. fact 16")
    assert pages("one line") == ["one line"]


def test_only_server_managers_count_as_chat_admins():
    from types import SimpleNamespace

    import discord

    from adapters.discord._normalise import _is_admin

    assert _is_admin(SimpleNamespace(guild_permissions=discord.Permissions(administrator=True)))
    assert _is_admin(SimpleNamespace(guild_permissions=discord.Permissions(manage_guild=True)))
    assert not _is_admin(SimpleNamespace(guild_permissions=discord.Permissions(send_messages=True)))
    assert not _is_admin(SimpleNamespace(name="a DM user without guild permissions"))
