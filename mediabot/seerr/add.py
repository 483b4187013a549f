"""Adds through the household's Seerr: a request filed as the member's own Seerr user.

With ``[seerr]`` set, ``add_media`` comes here instead of adding to Radarr/Sonarr. The
request is filed with ``X-API-User`` set to the Seerr user the member is linked to
(``[[users]] seerr_user``), never by the main key's owner acting for them (Seerr
would approve that by the owner's permissions), so Seerr's permissions, auto-approval,
quotas and 4K rules decide and the request is the member's in Seerr's list. mediabot's own
``[requests]`` approval and quotas do not apply here (``services.tool_context`` sets no gate).

Seerr's answers become one sentence in the person's language under ``message`` (the model
passes it on): pending approval, approved, quota exceeded with what is left, already
requested and by whom, blocklisted, no seasons left, no permission, no link. A movie
Seerr shows on its way (in Radarr) that nobody asked Seerr for is not filed again: the
asker is remembered for the "ready" text ("text me when it's ready", since issue 31 an
add). A member without a link is told so; nothing is ever filed in someone else's name.
What cannot be answered (Seerr down, the key refused) is a ToolError, with nothing filed.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from mediabot.arr.tools.base import Service, ToolContext, ToolError
from mediabot.arr.tools.format import sms_safe_title
from mediabot.seerr.api import (
    MediaStatus,
    RequestStatus,
    SeerrClient,
    SeerrError,
    SeerrMedia,
    SeerrUser,
    resolve_seerr_user,
)
from mediabot.seerr.view import annotate
from mediabot.text.language import Language

log = logging.getLogger(__name__)

Kind = Literal["movie", "tv"]
# Seerr's answers a person is told in a sentence; anything else cannot be answered.
TOLD = frozenset({"quota", "duplicate", "blocklisted", "no_seasons_left", "forbidden"})
LINK_PROBLEMS = frozenset({"unlinked", "not_found", "ambiguous"})


@dataclass(frozen=True)
class SeerrLink:
    """``ToolContext.seerr``: the household's Seerr and the asker's link to a Seerr user."""

    client: SeerrClient
    link: str | None      # the member's seerr_user, as written; None: not linked
    admin: bool = False   # the asker can fix a link, so is told how
    # Tells the admins that the asker has no working link, naming the title asked for.
    hint_admins: Callable[[str], None] | None = None

    def request_movie(self, ctx: ToolContext, tmdb_id: int) -> dict:
        return request_movie(ctx, self, tmdb_id)

    def request_series(self, ctx: ToolContext, tvdb_id: int,
                       seasons: str | list[int]) -> dict:
        return request_series(ctx, self, tvdb_id, seasons)

    def annotate(self, query: str, hits: list[dict]) -> list[str]:
        return annotate(self.client, query, hits)
    # The Seerr user id the link names: kept, or resolved now and kept (``seerr_members``);
    # None: resolved here from ``link`` each time.
    resolve: Callable[[], int] | None = None
    # How a text names a Seerr user: a member by their name, anyone else as not of the
    # household ("a Seerr user, theo"); None: Seerr's name for them.
    name_for: Callable[[Language, SeerrUser], str] | None = None

    def user_id(self) -> int:
        """The Seerr user the asker files as; raises ``SeerrError`` (unlinked, not_found,
        ambiguous, or what the call met)."""
        if self.resolve is not None:
            return self.resolve()
        return resolve_seerr_user(self.client, self.link).id


def request_movie(ctx: ToolContext, seerr: SeerrLink, tmdb_id: int) -> dict:
    """File a film request in Seerr as the asker; the result's ``message`` says what Seerr
    decided, in the asker's language."""
    media = _details(seerr.client, "movie", tmdb_id)
    return _file(ctx, seerr, media, Service.RADARR, tmdb_id, None)


def request_series(ctx: ToolContext, seerr: SeerrLink, tvdb_id: int,
                   seasons: str | list[int]) -> dict:
    """File a series request in Seerr as the asker: Seerr files series by their TMDB id,
    found from the TVDB id Sonarr and the model use."""
    try:
        media = seerr.client.find_series_by_tvdb(tvdb_id)
    except SeerrError as exc:
        raise _cannot(exc) from None
    if media is None:
        raise ToolError(f"Seerr knows no series with TVDB id {tvdb_id}; nothing was requested")
    return _file(ctx, seerr, media, Service.SONARR, tvdb_id, seerr_seasons(seasons, media))


def seerr_seasons(seasons: str | list[int], media: SeerrMedia) -> list[int] | Literal["all"]:
    """The tool's seasons as Seerr takes them: "all", or season numbers. Seerr has no
    "latest" or "future": both ask for the newest regular season."""
    if isinstance(seasons, list):
        return sorted(set(seasons))
    regular = [n for n in media.season_numbers if n > 0]
    return [max(regular)] if seasons in ("latest", "future") and regular else "all"


def _details(client: SeerrClient, kind: Kind, tmdb_id: int) -> SeerrMedia:
    try:
        return client.media(kind, tmdb_id)
    except SeerrError as exc:
        if exc.kind == "not_found":
            raise ToolError(f"Seerr knows no {kind} with TMDB id {tmdb_id}; nothing was "
                            "requested") from None
        raise _cannot(exc) from None


def _file(ctx: ToolContext, seerr: SeerrLink, media: SeerrMedia, service: Service,
          external_id: int, seasons: Sequence[int] | Literal["all"] | None) -> dict:
    lang, title = ctx.language, _label(media)
    if media.status == MediaStatus.AVAILABLE:
        return _told(lang.gettext("{title} is already available to watch.", title=title),
                     requested=False)
    if service == Service.RADARR and media.status == MediaStatus.PROCESSING \
            and not media.requests:
        # In Radarr, not downloaded, asked by nobody in Seerr: "text me when it's ready"
        # (add_media since issue 31) files nothing an admin would have to approve.
        _remember(ctx, service, external_id, title)
        return _told(lang.gettext("{title} is already on its way; you will get a text when "
                                  "it is ready.", title=title), requested=False)
    try:
        member = seerr.user_id()
    except SeerrError as exc:
        if exc.kind not in LINK_PROBLEMS:
            raise _cannot(exc) from None
        return _no_link(lang, seerr, exc, title)
    kind: Kind = "movie" if service == Service.RADARR else "tv"
    try:
        request = seerr.client.request_media(kind, media.tmdb_id, as_user=member,
                                             seasons=seasons, tvdb_id=media.tvdb_id)
    except SeerrError as exc:
        if exc.kind not in TOLD:
            raise _cannot(exc) from None
        return _refused(ctx, seerr, exc, media, member, service, external_id)
    _remember(ctx, service, external_id, title)
    if request.status == RequestStatus.PENDING:
        message = lang.gettext("I asked Seerr for {title}. The request is waiting for an "
                               "admin's approval there; you will get a text when it is "
                               "ready.", title=title)
        return _told(message, requested=True, status="pending approval", request=request.id)
    message = lang.gettext("I asked Seerr for {title} and it was approved; you will get a "
                           "text when it is ready.", title=title)
    return _told(message, requested=True, status="approved", request=request.id)


def _refused(ctx: ToolContext, seerr: SeerrLink, exc: SeerrError, media: SeerrMedia,
             member: int, service: Service, external_id: int) -> dict:
    """Seerr's refusal as one sentence; the asker still hears when a title already asked
    for arrives."""
    lang, title = ctx.language, _label(media)
    if exc.kind == "quota":
        return _told(_quota_text(lang, seerr.client, member, media), requested=False)
    if exc.kind == "duplicate":
        _remember(ctx, service, external_id, title)
        return _told(_duplicate_text(lang, seerr, member, media), requested=False)
    if exc.kind == "blocklisted":
        return _told(lang.gettext("{title} is on Seerr's blocklist, so it cannot be "
                                  "requested.", title=title), requested=False)
    if exc.kind == "no_seasons_left":
        _remember(ctx, service, external_id, title)
        return _told(lang.gettext("Every season of {title} is already available or "
                                  "requested in Seerr; nothing new to ask for.", title=title),
                     requested=False)
    return _told(lang.gettext("Your Seerr account may not request this. Ask an admin to give "
                              "it the Request permission in Seerr.", title=title),
                 requested=False)


def _quota_text(lang: Language, client: SeerrClient, member: int,
                media: SeerrMedia) -> str:
    """Over quota, with what Seerr says is left (asked as the member, which needs no
    permission); without the figures when Seerr will not give them."""
    try:
        quota = client.quota(member, acting_as=member)
    except SeerrError:
        return lang.gettext("Seerr did not file {title}: you have reached your request "
                            "limit.", title=_label(media))
    line = quota.movie if media.media_type == "movie" else quota.tv
    values = {"title": _label(media), "days": line.days or 0, "remaining": line.remaining or 0}
    if media.media_type == "movie":
        return lang.ngettext("Seerr did not file {title}: you may request {count} film every "
                             "{days} days, and you have {remaining} left.",
                             "Seerr did not file {title}: you may request {count} films every "
                             "{days} days, and you have {remaining} left.",
                             line.limit or 0, **values)
    return lang.ngettext("Seerr did not file {title}: you may request {count} season every "
                         "{days} days, and you have {remaining} left.",
                         "Seerr did not file {title}: you may request {count} seasons every "
                         "{days} days, and you have {remaining} left.",
                         line.limit or 0, **values)


def _duplicate_text(lang: Language, seerr: SeerrLink, member: int,
                    media: SeerrMedia) -> str:
    """Already requested: by the asker, or by whom Seerr names."""
    title = _label(media)
    try:
        requests = seerr.client.media("movie" if media.media_type == "movie" else "tv",
                                media.tmdb_id).requests
    except SeerrError:
        requests = media.requests
    names = list(dict.fromkeys(
        seerr.name_for(lang, r.requested_by) if seerr.name_for is not None
        else r.requested_by.shown_name
        for r in requests if r.requested_by.id != member))
    if any(r.requested_by.id == member for r in requests) and not names:
        return lang.gettext("You already asked Seerr for {title}; you will get a text when it "
                            "is ready.", title=title)
    if names:
        return lang.gettext("{title} was already requested in Seerr by {names}; you will get "
                            "a text when it is ready.", title=title, names=", ".join(names))
    return lang.gettext("{title} was already requested in Seerr; you will get a text when it "
                        "is ready.", title=title)


def _no_link(lang: Language, seerr: SeerrLink, exc: SeerrError, title: str) -> dict:
    """No Seerr user to file as: say so (and the admins how to fix it), and never fall back
    to the main key's owner."""
    if seerr.hint_admins is not None:
        seerr.hint_admins(title)
    log.warning("a request was not filed in Seerr: %s; set seerr_user in [[users]] or use "
                "`mediabot users add --seerr-user`", exc.message)
    if exc.kind == "unlinked":
        text = lang.gettext("Your number is not linked to a Seerr account yet, so I cannot "
                            "request it for you. Ask an admin to link it.")
    else:
        text = lang.gettext("Your number is linked to a Seerr account that Seerr does not "
                            "know, so I cannot request it for you. Ask an admin to fix the "
                            "link.")
    if seerr.admin:
        text += " " + lang.gettext("(Set seerr_user for this number in [[users]], then "
                                   "restart mediabot; mediabot check lists every link.)")
    return _told(text, requested=False)


def _remember(ctx: ToolContext, service: Service, external_id: int, title: str) -> None:
    """The asker wants a text when it arrives; never counted by [requests] quotas."""
    if ctx.record_request is not None:
        ctx.record_request(service, external_id, title)


def _told(message: str, *, requested: bool, **more: object) -> dict:
    return {"ok": True, "requested": requested, "via": "Seerr", **more, "message": message}


def _label(media: SeerrMedia) -> str:
    return sms_safe_title(f"{media.title} ({media.year})" if media.year else media.title)


def _cannot(exc: SeerrError) -> ToolError:
    """A Seerr failure nobody can fix by asking differently: nothing was filed."""
    if exc.kind == "unauthorized":
        return ToolError("Seerr refused mediabot's API key; nothing was requested. An admin "
                         "has to fix [seerr] api_key")
    if exc.kind == "unreachable" and "may still" in exc.message:
        return ToolError("Seerr did not answer in time; the request may have gone through "
                         "anyway. Check Seerr before asking again")
    if exc.kind == "unreachable":
        return ToolError("Seerr is not answering right now; nothing was requested. Try again "
                         "in a while")
    return ToolError(f"Seerr could not take the request ({exc.message}); nothing was requested")
