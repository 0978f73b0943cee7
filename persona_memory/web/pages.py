"""The human's pages: server-rendered HTML, one route per thing a person does.

Rules:
- Every page but the login and error pages needs a session; the user id comes from the
  session cookie only, never from the URL or a form, so every query is scoped to that person.
  A memory or notice id that is not theirs answers 404 and changes nothing.
- Every POST checks the session's CSRF token and, when the browser sends one, that the
  ``Origin`` is this site (``Sec-Fetch-Site`` where the browser sends it); then it redirects (303) to a page that says what happened, chosen
  from a fixed list (``views.DONE_MESSAGES``), so no request text is ever echoed back.
- Templates autoescape; memory text, notes, room titles and transcript lines are rendered as
  text and never as links, images or markup. People are named as ``views.Reader`` phrases
  them ("You", display names), rooms by title or kind, never by id.
- The memories page's search, filters and pages are a GET form and plain links, so they work
  without script; a value the form never sends answers 400 with what to send instead.
- Only a persona the person has met (it keeps lines about them, shared a room with them, or
  was muted by them) can be switched; any other slug is refused with a message (404). No page has inline script (the CSP forbids it);
  the note's live counter is ``static/note.js``, and everything works without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import jinja2
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import InvalidInput, NotYourMemory, NotYourNotice
from ..ids import check_persona, parse_user_ref, persona_name
from ..memory import Memory
from ..rows import MemoryRow
from . import views
from .auth import CSRF_FIELD, SESSION_COOKIE, Auth, LinkRefused, Session
from .hosts import PublicOrigin

MAX_ID = 2**63 - 1

LINK_REFUSED = {
    "expired": "This login link has expired. Links work for a short while only: ask for a new one in the chat.",
    "used": "This login link was used already. Each link works once: ask for a new one in the chat.",
    "invalid": "This login link is not valid. Ask for a new one in the chat, and open it as it was sent.",
}


class Pages:
    """The HTML routes, over one ``Memory`` and one ``Auth``."""

    def __init__(self, memory: Memory, auth: Auth, templates: jinja2.Environment, public: PublicOrigin) -> None:
        self.memory = memory
        self.auth = auth
        self.templates = templates
        self.public = public

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.memories, methods=["GET"]),
            Route("/memories/{memory_id:int}", self.evidence, methods=["GET"]),
            Route("/memories/{memory_id:int}/delete", self.delete, methods=["POST"]),
            Route("/clear", self.confirm_clear, methods=["GET"]),
            Route("/clear", self.clear, methods=["POST"]),
            Route("/note", self.note, methods=["GET"]),
            Route("/note", self.save_note, methods=["POST"]),
            Route("/switches", self.switches, methods=["GET"]),
            Route("/switches/memory", self.switch_memory, methods=["POST"]),
            Route("/switches/mute", self.switch_mute, methods=["POST"]),
            Route("/notices", self.notices, methods=["GET"]),
            Route("/notices/{notice_id:int}/undo", self.undo, methods=["POST"]),
            Route("/export", self.export, methods=["GET"]),
            Route("/export.json", self.export_json, methods=["GET"]),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
        ]

    # ---- plumbing ----------------------------------------------------------------------

    async def render(
        self, request: Request, template: str, *, session: Session | None, status: int = 200, **context: Any
    ) -> HTMLResponse:
        user = None
        if session is not None:
            user = (await self.reader(session.user_id)).name
        html = self.templates.get_template(template).render(
            session=session,
            user=user,
            csrf=self.auth.csrf_token(session) if session else "",
            done=views.done_message(request.query_params.get("done")),
            path=context.pop("path", request.url.path),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    async def session(self, request: Request) -> Session:
        session = await self.auth.read_session(request.cookies.get(SESSION_COOKIE))
        if session is None:
            raise HTTPException(401, "You are not signed in. Open the login link from the chat to see this page.")
        return session

    def check_origin(self, request: Request) -> None:
        """Refuse a POST that the browser says came from another origin.

        Browsers that send ``Sec-Fetch-Site`` say it outright; for the rest, an ``Origin``
        header must be the configured public origin (``hosts.PublicOrigin``; never one built
        from the request's ``Host``), and ``null`` is refused. A request with neither (not from
        a browser) still needs the session's CSRF token.
        """
        fetch_site = request.headers.get("sec-fetch-site")
        origin = request.headers.get("origin")
        if fetch_site is not None:
            allowed = fetch_site in ("same-origin", "none")
        elif origin is not None:
            allowed = self.public.is_origin_of(origin, request.scope)
        else:
            allowed = True
        if not allowed:
            raise HTTPException(403, "This form was sent from another site, so it was refused.")

    async def posted(self, request: Request) -> tuple[Session, FormData]:
        """The session and form of a state-changing request, after the CSRF checks."""
        session = await self.session(request)
        self.check_origin(request)
        form = await request.form()
        if not self.auth.csrf_ok(session, form.get(CSRF_FIELD)):
            raise HTTPException(
                403, "This form is out of date or did not come from your page. Reload the page and try again."
            )
        return session, form

    async def reader(
        self, user_id: int, rows: Iterable[MemoryRow] = (), texts: Iterable[str] = (),
        room_ids: Iterable[str | None] = (), personas: Iterable[str] = (),
    ) -> views.Reader:
        """What phrasing for ``user_id`` needs: the display names of everyone the rows and
        ``texts`` name, the rooms they came from, and the personas' names."""
        rows = list(rows)
        said = [r.text for r in rows] + list(texts)
        people = {user_id} | {uid for t in said for uid in _users_in(t)}
        rooms = {r.room_id for r in rows} | set(room_ids)
        return views.Reader(
            user_id=user_id,
            names=await self.memory.display_names(people),
            rooms=await self.memory.room_facts(r for r in rooms if r is not None),
            personas=tuple(sorted({r.persona for r in rows} | set(personas))),
        )

    @staticmethod
    def done(path: str, code: str, anchor: str = "") -> RedirectResponse:
        return RedirectResponse(f"{path}?done={code}{anchor}", status_code=303)

    # ---- what personas remember --------------------------------------------------------

    async def memories(self, request: Request) -> Response:
        session = await self.session(request)
        uid = session.user_id
        try:
            query = views.LineQuery.from_params(request.query_params)
        except InvalidInput as exc:
            raise HTTPException(400, str(exc)) from None
        rows = await self.memory.memories_about(uid)
        controls = await self.memory.user_controls(uid)
        personas = sorted(set(await self.memory.personas_for(uid)) | {r.persona for r in rows})
        blocks = {p: await self.memory.private_block(uid, p) for p in personas}
        reader = await self.reader(uid, rows, personas=personas)
        groups = views.persona_views(
            rows, reader, personas=personas, muted=controls.muted,
            meters={p: (used, limit) for p, (used, limit, _) in blocks.items()},
            riding={p: loaded for p, (_, _, loaded) in blocks.items()},
        )
        return await self.render(
            request, "memories.html", session=session, listing=views.memories_page(groups, query),
            controls=controls, personas=[(p, persona_name(p)) for p in personas],
            kinds=views.KIND_LABELS, states=views.STATES,
        )

    async def evidence(self, request: Request) -> Response:
        session = await self.session(request)
        memory_id = _id(request.path_params["memory_id"])
        rows = await self.memory.memories_about(session.user_id)
        row = next((r for r in rows if r.id == memory_id), None)
        if row is None:
            raise _no_such_line()
        try:
            lines = await self.memory.evidence(session.user_id, memory_id)
        except NotYourMemory:
            raise _no_such_line() from None
        by_id = {r.id: r for r in rows}
        speakers = [line.speaker for line in lines]
        reader = await self.reader(session.user_id, rows, texts=speakers)
        _, _, riding = await self.memory.private_block(session.user_id, row.persona)
        line = views.line_view(row, by_id, reader, riding)
        return await self.render(
            request,
            "evidence.html",
            session=session,
            line=line,
            persona=persona_name(row.persona),
            spoken=views.spoken_lines(lines, reader),
        )

    async def delete(self, request: Request) -> Response:
        session, _ = await self.posted(request)
        memory_id = _id(request.path_params["memory_id"])
        try:
            await self.memory.delete_memory(session.user_id, memory_id)
        except NotYourMemory:
            raise _no_such_line() from None
        return self.done("/", "deleted")

    async def confirm_clear(self, request: Request) -> Response:
        session = await self.session(request)
        persona = _persona_or_none(request.query_params.get("persona"))
        rows = await self.memory.memories_about(session.user_id)
        count = sum(1 for r in rows if persona is None or r.persona == persona)
        return await self.render(
            request,
            "clear.html",
            session=session,
            persona=persona,
            name=persona_name(persona) if persona else None,
            count=count,
        )

    async def clear(self, request: Request) -> Response:
        session, form = await self.posted(request)
        persona = _persona_or_none(_text(form.get("persona")))
        await self.memory.clear_memories(session.user_id, persona)
        return self.done("/", "cleared")

    # ---- the note ----------------------------------------------------------------------

    async def note(self, request: Request) -> Response:
        session = await self.session(request)
        controls = await self.memory.user_controls(session.user_id)
        return await self.render(
            request, "note.html", session=session, note=views.NoteView(controls.memory_note), error=None
        )

    async def save_note(self, request: Request) -> Response:
        session, form = await self.posted(request)
        text = views.normalize_note(_text(form.get("note")))
        try:
            await self.memory.set_memory_note(session.user_id, text)
        except InvalidInput as exc:
            return await self.render(
                request,
                "note.html",
                session=session,
                status=422,
                note=views.NoteView(text),
                error=_sentence(str(exc)),
            )
        return self.done("/note", "note" if text else "note-cleared")

    # ---- the switches ------------------------------------------------------------------

    async def switches(
        self, request: Request, *, error: str | None = None, status: int = 200, path: str | None = None
    ) -> Response:
        session = await self.session(request)
        controls = await self.memory.user_controls(session.user_id)
        personas = sorted(set(await self.memory.personas_for(session.user_id)) | controls.muted)
        return await self.render(
            request,
            "switches.html",
            session=session,
            status=status,
            controls=controls,
            personas=[(p, persona_name(p), p in controls.muted) for p in personas],
            error=error,
            path=path or request.url.path,
        )

    async def switch_memory(self, request: Request) -> Response:
        session, form = await self.posted(request)
        on = _flag(form.get("on"))
        await self.memory.set_memory_on(session.user_id, on)
        return self.done("/switches", "memory-on" if on else "memory-off")

    async def switch_mute(self, request: Request) -> Response:
        session, form = await self.posted(request)
        persona = _persona_or_none(_text(form.get("persona")))
        if persona is None:
            raise HTTPException(400, "Say which persona to switch.")
        muted = _flag(form.get("muted"))
        if persona not in await self.memory.personas_for(session.user_id):
            return await self.switches(request, status=404, error=unknown_persona(persona), path="/switches")
        await self.memory.set_muted(session.user_id, persona, muted)
        return self.done("/switches", "muted" if muted else "unmuted")

    # ---- notices -----------------------------------------------------------------------

    async def notices(self, request: Request) -> Response:
        session = await self.session(request)
        notices = await self.memory.notices(session.user_id)
        kept = [r.id for r in await self.memory.memories_about(session.user_id) if r.id is not None]
        reader = await self.reader(
            session.user_id, texts=[n.text for n in notices], room_ids=[n.room_id for n in notices],
            personas=[n.persona for n in notices],
        )
        return await self.render(
            request, "notices.html", session=session, notices=views.notice_views(notices, reader, kept)
        )

    async def undo(self, request: Request) -> Response:
        session, _ = await self.posted(request)
        try:
            await self.memory.undo(session.user_id, _id(request.path_params["notice_id"]))
        except NotYourNotice:
            raise HTTPException(404, "There is no such notice (it may have been undone already).") from None
        return self.done("/notices", "undone")

    # ---- export ------------------------------------------------------------------------

    async def export(self, request: Request) -> Response:
        session = await self.session(request)
        return await self.render(request, "export.html", session=session)

    async def export_json(self, request: Request) -> Response:
        session = await self.session(request)
        data = await self.memory.export(session.user_id)
        filename = f"persona-memory-u{session.user_id}.json"
        return Response(
            json.dumps(data, indent=2, ensure_ascii=False) + "\n",
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    # ---- signing in and out ------------------------------------------------------------

    async def login_page(self, request: Request) -> Response:
        token = request.query_params.get("token")
        if not token:
            return await self.render(request, "signed_out.html", session=None)
        try:
            user_id = await self.auth.check_login(token)
        except LinkRefused as exc:
            return await self.render(
                request, "error.html", session=None, status=403,
                title="This link does not work", message=LINK_REFUSED[exc.reason],
            )
        reader = await self.reader(user_id)
        return await self.render(request, "login.html", session=None, token=token, login_user=reader.name)

    async def login(self, request: Request) -> Response:
        self.check_origin(request)
        form = await request.form()
        try:
            session = await self.auth.redeem_login(_text(form.get("token")))
        except LinkRefused as exc:
            return await self.render(
                request, "error.html", session=None, status=403,
                title="This link does not work", message=LINK_REFUSED[exc.reason],
            )
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, self.auth.session_cookie(session), **self.auth.cookie_options())
        return response

    async def logout(self, request: Request) -> Response:
        session, _ = await self.posted(request)
        await self.auth.end_session(session)
        response = RedirectResponse("/login", status_code=303)
        options = self.auth.cookie_options()
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=options["secure"], httponly=True, samesite="lax"
        )
        return response


def unknown_persona(persona: str) -> str:
    """The refusal to switch a persona the person never met (a typo would look like success)."""
    return (
        f"There is no persona “{persona}” among yours, so nothing was switched: only a persona that "
        "keeps lines about you or has been in a chat with you can forget you."
    )


def _users_in(text: str) -> set[int]:
    """The user ids a text names (``u:17``, ``u:17's``)."""
    found = (parse_user_ref(m) for m in re.findall(r"u:\d+", text))
    return {uid for uid in found if uid is not None}


def _id(value: int) -> int:
    if not 1 <= value <= MAX_ID:
        raise HTTPException(404, "There is nothing here.")
    return value


def _no_such_line() -> HTTPException:
    return HTTPException(404, "There is no such line among yours (it may have been deleted already).")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _flag(value: object) -> bool:
    if value not in ("0", "1"):
        raise HTTPException(400, "The switch was sent without a clear on or off.")
    return value == "1"


def _persona_or_none(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return check_persona(value)
    except InvalidInput:
        raise HTTPException(404, "There is no such persona.") from None


def _sentence(message: str) -> str:
    return message[:1].upper() + message[1:]
