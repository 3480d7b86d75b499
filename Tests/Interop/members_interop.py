#!/usr/bin/env python3
"""Members across implementations: Telethon 1.45's iter_participants and our client's member iterator (`mtcall members`)
over one supergroup seeded on `mtserver` with 1,500 members and 3 bots (--seed-supergroup), Alice its owner.

Checks:
  - Telethon's iter_participants yields 1,504 users, each once; with filter=ChannelParticipantsBots the 3 bots, with
    ChannelParticipantsAdmins Alice alone, with search='member 17' the 11 "Member 17…" users.
  - `mtcall members` (signed in as Alice on its own session; it finds the group in the dialogs) prints the same users
    as Telethon for each filter (all, bots, admins, search:member 17).
  - Telethon makes member5 an admin (edit_admin, title "Helper") and bans member6 (edit_permissions
    view_messages=False); `mtcall ban` bans member7 and `mtcall promote --rights ban_users --title Mod` promotes
    member8. Both sides then list the same admins (with their titles) and the same banned users.
  - Telethon exports an invite link; `mtcall join` with it makes Bob (our client) a member, which Telethon's
    iter_participants then shows. Telethon revokes the link (EditExportedChatInviteRequest revoked=True); `mtcall
    join` as Carol then fails with the server's INVITE_HASH_EXPIRED, and a malformed link is a usage error (exit 64).
Every subprocess and await is bounded in time. Exit status 0 only if every check passed.

Usage: members_interop.py --mtserver PATH --mtcall PATH
"""
import asyncio
import json
import os
import sys

from telethon.tl import functions, types
from telethon_common import run_against_mtserver, signed_in, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")
CAROL = ("9996620003", "22222")
COUNT, BOTS = 1500, 3


async def mtcall(args, ready, keyfile, session, account, *words, expect=0):
    """Runs mtcall signed in as `account` with `words`; returns (stdout lines, stderr). The exit status must be
    `expect`."""
    flags = ["--server", f"127.0.0.1:{ready['ports']['2']}", "--dc", "2", "--rsa-key", keyfile, "--session", session,
             "--phone", account[0], "--code", account[1]]
    process = await asyncio.create_subprocess_exec(args.mtcall, *flags, *words, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == expect, f"mtcall {' '.join(words)}: exit {process.returncode}: {err.decode()}"
    return out.decode().splitlines(), err.decode()


def user_ids(lines):
    """The user ids `mtcall members` printed, in order."""
    return [int(json.loads(line)["user"].split("#")[1]) for line in lines]


async def telethon_ids(client, group, **kwargs):
    """The user ids Telethon's iter_participants yields, in order, with the participant objects by id."""
    users = [user async for user in client.iter_participants(group, **kwargs)]
    return [u.id for u in users], {u.id: u.participant for u in users}


async def scenario(args, ready, keyfile, workdir, log_path):
    alice = await signed_in(ready, *ALICE)
    try:
        group = next(d.entity for d in await alice.get_dialogs() if d.name == "Big")
        chat = f"channel:{group.id}"
        session = os.path.join(workdir, "alice.sqlite")

        every, _ = await telethon_ids(alice, group)
        assert len(every) == COUNT + BOTS + 1 and len(set(every)) == len(every), \
            f"Telethon's iter_participants: {len(every)} users, {len(set(every))} distinct"
        bots, _ = await telethon_ids(alice, group, filter=types.ChannelParticipantsBots)
        admins, _ = await telethon_ids(alice, group, filter=types.ChannelParticipantsAdmins)
        found, _ = await telethon_ids(alice, group, search="member 17")
        assert len(bots) == BOTS and len(admins) == 1 and len(found) == 11, (len(bots), len(admins), len(found))
        print(f"ok   Telethon's iter_participants yields each of the {len(every)} members once; bots, admins and "
              f"search give {len(bots)}, {len(admins)}, {len(found)}", flush=True)

        for filter_flag, expected in (("all", every), ("bots", bots), ("admins", admins), ("search:member 17", found)):
            lines, _ = await mtcall(args, ready, keyfile, session, ALICE, "members", chat, "--filter", filter_flag)
            ours = user_ids(lines)
            assert len(ours) == len(set(ours)), f"mtcall members --filter {filter_flag}: a member twice"
            assert ours == expected, f"--filter {filter_flag}: ours {ours[:5]}… ({len(ours)}), Telethon's " \
                                     f"{expected[:5]}… ({len(expected)})"
        print("ok   mtcall members prints the same members as Telethon, in the same order, for all, bots, admins and "
              "search", flush=True)

        by_name = {}
        async for user in alice.iter_participants(group, search="member"):
            by_name[user.username] = user
        await alice.edit_admin(group, by_name["member5"], ban_users=True, title="Helper")
        await alice.edit_permissions(group, by_name["member6"], view_messages=False)
        await mtcall(args, ready, keyfile, session, ALICE, "ban", chat, f"user:{by_name['member7'].id}")
        await mtcall(args, ready, keyfile, session, ALICE, "promote", chat, f"user:{by_name['member8'].id}",
                     "--rights", "ban_users", "--title", "Mod")
        admins, participants = await telethon_ids(alice, group, filter=types.ChannelParticipantsAdmins)
        kicked, _ = await telethon_ids(alice, group, filter=types.ChannelParticipantsKicked)
        ranks = {uid: getattr(p, "rank", None) for uid, p in participants.items()}
        me = await alice.get_me()
        assert set(admins) == {me.id, by_name["member5"].id, by_name["member8"].id}, admins
        assert ranks[by_name["member5"].id] == "Helper" and ranks[by_name["member8"].id] == "Mod", ranks
        assert participants[by_name["member8"].id].admin_rights.ban_users, participants[by_name["member8"].id]
        assert set(kicked) == {by_name["member6"].id, by_name["member7"].id}, kicked
        lines, _ = await mtcall(args, ready, keyfile, session, ALICE, "members", chat, "--filter", "admins")
        assert user_ids(lines) == admins, (user_ids(lines), admins)
        assert {json.loads(line)["rank"] for line in lines} == {None, "Helper", "Mod"}, lines
        lines, _ = await mtcall(args, ready, keyfile, session, ALICE, "members", chat, "--filter", "banned")
        assert user_ids(lines) == kicked, (user_ids(lines), kicked)
        print("ok   bans and promotions made by either side show the same on both (admins with titles, the banned)",
              flush=True)

        invite = await alice(functions.messages.ExportChatInviteRequest(peer=group))
        lines, _ = await mtcall(args, ready, keyfile, os.path.join(workdir, "bob.sqlite"), BOB, "join", invite.link)
        assert json.loads(lines[0])["joined"] == f"channel#{group.id}", lines
        after, _ = await telethon_ids(alice, group)
        assert len(after) == len(every) - 2 + 1 and after[0] not in every, (len(after), after[:3])
        await alice(functions.messages.EditExportedChatInviteRequest(peer=group, link=invite.link, revoked=True))
        _, err = await mtcall(args, ready, keyfile, os.path.join(workdir, "carol.sqlite"), CAROL, "join", invite.link,
                              expect=1)
        assert "INVITE_HASH_EXPIRED" in err, err
        _, err = await mtcall(args, ready, keyfile, os.path.join(workdir, "carol.sqlite"), CAROL, "join",
                              "https://t.me/durov", expect=64)
        assert "not an invite link" in err, err
        print("ok   mtcall join by Telethon's link makes Bob a member Telethon sees; after Telethon revokes it, "
              "INVITE_HASH_EXPIRED; a malformed link is a usage error", flush=True)
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


async def main():
    args = tool_arguments()
    return await run_against_mtserver(
        "members interop", args.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", "9996620001:Alice::alice_test", "--user", "9996610002:Bob::bob_test",
         "--user", "9996620003:Carol::carol_test", "--seed-supergroup", f"9996620001:{COUNT}:{BOTS}:Big"],
        lambda ready, keyfile, workdir, log_path: scenario(args, ready, keyfile, workdir, log_path))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
