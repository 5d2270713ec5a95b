"""Argument and result models of the shared workspace (compiled into contract/tools.json; never
imported when a tool runs). Argument names are seed 004's (`projectId`, `meetingId`, ...), so an
agent written against n2n-nexus calls these tools unchanged; the CLI spells them `--project-id`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.models import Args, Epoch, Page, Result, Stamp
from ..core.settings import CHAT_MAX, DOC_MAX

PROJECT_ID = r"^[A-Za-z0-9][A-Za-z0-9-]*_[A-Za-z0-9][A-Za-z0-9._-]*$"
ProjectId = Field(min_length=3, max_length=100, pattern=PROJECT_ID,
                  json_schema_extra={"x-hint": "must be [prefix]_[name], like web_example.com "
                                     "or api_user-auth (letters, digits, . _ -)"},
                  description="Project id, [prefix]_[name] (web_example.com, mcp_nexus).")
DOC_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
MeetingId = Field(min_length=1, max_length=64, description="Meeting id (mtg-...).")
Category = Literal["MEETING_START", "PROPOSAL", "DECISION", "UPDATE", "CHAT"]
Confirm = Field(False, description="Needed when an agent calls it: the person at the shell "
                "may omit it.")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Relation(Strict):
    targetId: str = Field(min_length=1, max_length=100, description="The related project's id.")
    type: Literal["dependency", "parent", "child", "related"]


class Endpoint(Strict):
    name: str = Field(max_length=200)
    url: str = Field(max_length=2000)
    description: str = Field(max_length=2000)


class ApiSpec(Strict):
    method: str = Field(max_length=20)
    path: str = Field(max_length=2000)
    summary: str = Field(max_length=2000)


class Billing(Strict):
    plain: str | None = Field(None, max_length=200)
    price: str | float | None = None


class Manifest(Strict):
    """Project manifest v2, as seed 004 lists its fields."""
    id: str = ProjectId
    name: str = Field(min_length=1, max_length=200, description="Human-readable name.")
    description: str = Field(max_length=10_000, description="Project summary.")
    techStack: list[str] = Field(max_length=100, description="Technologies used.")
    relations: list[Relation] = Field(max_length=500,
                                      description="{targetId, type}: dependency, parent, child "
                                      "or related.")
    repositoryUrl: str = Field(max_length=2000)
    localPath: str = Field(max_length=4096)
    endpoints: list[Endpoint] = Field(max_length=500, description="{name, url, description}.")
    apiSpec: list[ApiSpec] = Field(max_length=2000, description="{method, path, summary}.")
    billing: Billing | None = None
    lastUpdated: str | None = Field(None, max_length=64)
    apiDependencies: dict[str, str] | None = Field(None, description="Project id -> version "
                                                   "constraint.")
    gatewayCompatibility: str | None = Field(None, max_length=200)
    api_versions: dict[str, str] | None = Field(None, description="Feature -> API version.")
    feature_tier: Literal["standard", "advanced", "team"] | None = None


class Patch(Strict):
    """Manifest fields to change; `id` is refused (use rename_project)."""
    id: str | None = Field(None, description="Refused: the id changes only through "
                           "rename_project.")
    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=10_000)
    techStack: list[str] | None = Field(None, max_length=100)
    relations: list[Relation] | None = Field(None, max_length=500)
    repositoryUrl: str | None = Field(None, max_length=2000)
    localPath: str | None = Field(None, max_length=4096)
    endpoints: list[Endpoint] | None = Field(None, max_length=500)
    apiSpec: list[ApiSpec] | None = Field(None, max_length=2000)
    billing: Billing | None = None
    lastUpdated: str | None = Field(None, max_length=64)
    apiDependencies: dict[str, str] | None = None
    gatewayCompatibility: str | None = Field(None, max_length=200)
    api_versions: dict[str, str] | None = None
    feature_tier: Literal["standard", "advanced", "team"] | None = None


# -- projects -------------------------------------------------------------------------------------


class SyncProjectArgs(Args):
    manifest: Manifest = Field(description="The full manifest (JSON on the CLI).",
                               json_schema_extra={"x-json": True})
    internalDocs: str = Field(max_length=DOC_MAX, description="Markdown implementation guide or "
                              "internal notes.")


class ProjectAck(Result):
    ok: bool
    projectId: str
    created: bool = Field(False, description="True when the project was new.")


class UploadAssetArgs(Args):
    projectId: str = ProjectId
    fileName: str = Field(min_length=1, max_length=255, description="A file name only; unsafe "
                          "characters are replaced, `.` is refused.")
    base64Content: str = Field(max_length=14_000_000, description="The file, base64-encoded "
                               "(at most 10 MiB decoded).")


class AssetAck(Result):
    ok: bool
    projectId: str
    fileName: str = Field(description="The name it is stored under (sanitised).")
    size: int
    sha256: str
    unchanged: bool = Field(description="True when the same content was already stored.")


class UpdateProjectArgs(Args):
    projectId: str = ProjectId
    patch: Patch = Field(description="Manifest fields to change (JSON on the CLI).",
                         json_schema_extra={"x-json": True})


class RenameProjectArgs(Args):
    oldId: str = ProjectId
    newId: str = ProjectId


class RenameAck(Result):
    ok: bool
    oldId: str
    newId: str
    relationsUpdated: int = Field(description="Relations in other projects rewritten.")


class SearchProjectsArgs(Args):
    query: str = Field(min_length=1, max_length=200, description="Matches id, name, summary, "
                       "tech stack and internal docs.")
    limit: int = Field(10, ge=1, le=200, description="At most this many (1-200).")


class ProjectHit(Result):
    id: str
    name: str
    description: str
    techStack: list[str]


class SearchProjectsResult(Result):
    query: str
    count: int
    total: int = Field(description="Matches before the limit.")
    results: list[ProjectHit]


class TopologyArgs(Args):
    projectId: str | None = Field(None, max_length=100, description="Only this project and its "
                                  "neighbours; without it, every project.")


class Node(Result):
    id: str
    name: str
    relationsCount: int = Field(description="Relations this project declares.")
    missing: bool = Field(False, description="Named by a relation but not registered.")


class Edge(Result):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    type: str


class TopologySummary(Result):
    totalProjects: int
    totalEdges: int
    hint: str


class TopologyResult(Result):
    mode: Literal["list", "focused"]
    projectId: str | None = None
    summary: TopologySummary
    projects: list[Node] = Field(description="Every project (list mode) or the subgraph's.")
    nodes: list[Node] = Field(description="The nodes of the graph shown.")
    edges: list[Edge]
    dot: str = Field(description="The same graph in Graphviz DOT.")


class GetProjectArgs(Args):
    projectId: str = ProjectId
    includeDocs: bool = Field(True, description="False: leave out the internal docs.")


class AssetInfo(Result):
    fileName: str
    size: int
    sha256: str
    updatedBy: str
    lastUpdated: str | None = Stamp("Stored")
    lastUpdated_epoch: float | None = Epoch("Stored")


class ProjectResult(Result):
    manifest: Manifest
    internalDocs: str | None = None
    assets: list[AssetInfo]
    updatedBy: str
    lastUpdated: str | None = Stamp("Last change")
    lastUpdated_epoch: float | None = Epoch("Last change")


class DeleteProjectArgs(Args):
    projectId: str = ProjectId
    confirm: bool = Confirm


class DeleteAck(Result):
    ok: bool
    projectId: str
    assetsRemoved: int


# -- strategy and docs ----------------------------------------------------------------------------


class StrategyArgs(Args):
    content: str = Field(max_length=DOC_MAX, description="The whole strategy document "
                         "(Markdown); `-` reads stdin on the CLI.")


class StrategyAck(Result):
    ok: bool
    version: int
    unchanged: bool = Field(description="True when the content was the current version's.")


class GetStrategyArgs(Args):
    history: int = Field(0, ge=0, le=50, description="Also list this many recent versions and "
                         "the diff between the newest two.")


class StrategyVersion(Result):
    version: int
    updatedBy: str
    size: int
    lastUpdated: str | None = Stamp("Written")
    lastUpdated_epoch: float | None = Epoch("Written")


class StrategyResult(Result):
    content: str
    version: int | None = None
    updatedBy: str | None = None
    lastUpdated: str | None = Stamp("Written")
    lastUpdated_epoch: float | None = Epoch("Written")
    history: list[StrategyVersion] | None = None
    diff: str | None = Field(None, description="Unified diff from the previous version.")


class NoArgs(Args):
    pass


class DocInfo(Result):
    docId: str
    title: str
    updatedBy: str
    lastUpdated: str | None = Stamp("Last change")
    lastUpdated_epoch: float | None = Epoch("Last change")


class DocsResult(Result):
    count: int
    docs: list[DocInfo]


class DocIdArgs(Args):
    docId: str = Field(min_length=1, max_length=100, pattern=DOC_ID,
                       json_schema_extra={"x-hint": "letters, digits, . _ - (no / or ..)"},
                       description="Document id.")


class DocResult(DocInfo):
    content: str


class SyncDocArgs(DocIdArgs):
    title: str = Field(min_length=1, max_length=300, description="Human-readable title.")
    content: str = Field(max_length=DOC_MAX, description="Markdown; `-` reads stdin on the CLI.")


class DocAck(Result):
    ok: bool
    docId: str
    created: bool


# -- meetings -------------------------------------------------------------------------------------


class ListMeetingsArgs(Args):
    status: Literal["active", "closed", "archived"] | None = Field(None, description="Only "
                                                                     "meetings in this status.")
    limit: int = Field(20, ge=1, le=200, description="At most this many, newest first (1-200).")


class Decision(Result):
    messageId: int
    from_: str = Field(alias="from")
    text: str
    timestamp: str | None = Stamp("Posted")
    timestamp_epoch: float | None = Epoch("Posted")
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Meeting(Result):
    id: str
    topic: str
    status: Literal["active", "closed", "archived"]
    initiator: str = Field(description="The session (instance) that started it.")
    startTime: str | None = Stamp("Started")
    startTime_epoch: float | None = Epoch("Started")
    endTime: str | None = Stamp("Ended")
    endTime_epoch: float | None = Epoch("Ended")
    participants: list[str] = Field(description="Who started, posted in or read it.")
    messageCount: int
    decisionCount: int
    summary: str | None = None
    decisions: list[Decision] = Field(description="Its DECISION messages, collected when it "
                                      "ends.")


class MeetingsResult(Result):
    count: int
    activeMeetingId: str | None
    meetings: list[Meeting]


class StartMeetingArgs(Args):
    topic: str = Field(min_length=1, max_length=300, description="What the meeting is about.")


class MeetingAck(Result):
    ok: bool
    message: str
    meetingId: str
    status: Literal["active", "closed", "archived"]
    topic: str
    summary: str | None = Field(None, description="The closing summary, if any.")
    meeting: Meeting


class EndMeetingArgs(Args):
    meetingId: str | None = Field(None, max_length=64, description="The meeting; the active one "
                                  "when left out.")
    summary: str | None = Field(None, max_length=CHAT_MAX, description="A closing summary.")


class MeetingIdArgs(Args):
    meetingId: str = MeetingId


# -- chat -----------------------------------------------------------------------------------------


class SendMessageArgs(Args):
    message: str = Field(min_length=1, max_length=CHAT_MAX, description="The text; `@name` "
                         "addresses (and wakes) a session.")
    category: Category | None = Field(None, description="MEETING_START, PROPOSAL, DECISION, "
                                      "UPDATE or CHAT (the default).")
    meetingId: str | None = Field(None, max_length=64, description="This meeting (must be "
                                  "active); else the active meeting, else global chat.")


class SentMessage(Result):
    ok: bool
    sentTo: Literal["meeting", "global"]
    meetingId: str | None = None
    messageId: int
    message: str
    category: Category
    mentioned: list[str] = Field(description="Sessions addressed with @name (told, and woken).")


class ReadMessagesArgs(Args):
    count: int = Field(10, ge=1, le=500, description="At most this many (1-500).")
    meetingId: str | None = Field(None, max_length=64, description="Read this meeting; "
                                  "without it, global chat.")


class ChatMessage(Result):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: int
    from_: str = Field(alias="from", description="The sending session (instance) id.")
    name: str = Field(description="The sender's display name.")
    text: str
    category: Category
    timestamp: str | None = Stamp("Posted")
    timestamp_epoch: float | None = Epoch("Posted")


class ReadMessagesResult(Result):
    source: Literal["meeting", "global"]
    hub: str | None = Field(None, description="`Global` for global chat.")
    meetingId: str | None = None
    meeting: str | None = Field(None, description="The meeting's topic.")
    messages: list[ChatMessage] = Field(description="Not yet returned to you, oldest first.")
    remaining: int = Field(description="Unread messages left after these.")


class MaintenanceArgs(Args):
    action: Literal["prune", "clear"] = Field(description="prune: remove the oldest `count`; "
                                              "clear: remove all.")
    count: int = Field(0, ge=0, le=10_000_000, description="How many oldest messages prune "
                       "removes (ignored by clear).")
    confirm: bool = Confirm


class MaintenanceResult(Result):
    ok: bool
    removed: int
    remaining: int


# -- find -----------------------------------------------------------------------------------------


class FindArgs(Args):
    query: str = Field(min_length=1, max_length=500, description="Words to find (all must "
                       "match; \"a phrase\", prefix*, OR are understood).")
    kind: Literal["project", "doc", "strategy", "chat", "meeting", "message"] | None = Field(
        None, description="Only this kind of text.")
    projectId: str | None = Field(None, max_length=100, description="Only this project's docs "
                                  "and what sessions in its localPath wrote.")
    limit: int = Field(10, ge=1, le=100, description="Page size (1-100).")
    offset: int = Field(0, ge=0, le=10_000, description="Skip this many.")


class Hit(Result):
    kind: Literal["project", "doc", "strategy", "chat", "meeting", "message"]
    ref: str = Field(description="Project id, doc id, strategy version, chat message id, "
                     "meeting id or direct message id.")
    title: str
    snippet: str = Field(description="The matching words in [brackets], with context.")
    score: float = Field(description="BM25 rank: lower is better.")
    how: str = Field(description="The tool or command that shows it whole.")


class FindResult(Page):
    query: str
    hits: list[Hit]


__all__ = [n for n in dir() if n[0].isupper()] + ["Any"]
