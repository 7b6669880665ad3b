"""The first-call tool hints of the Argo CD and GitHub agents (`agents.tool_hints`).

Each hint is a request's plain words for one tool. Order matters: the first match wins, so
the narrower or riskier reading comes first (a rollback "to the previous deploy" before
deploy history; an action on a Deployment before the app's resources). A tool about one
application is hinted only when the question names one (`named=True`). Where two tools overlap
and neither reading is plain (a repository's open issues: its listing or a search), no hint is
given and the model chooses.
"""

from __future__ import annotations

import re

from pilothouse.agents.question_parts import is_name
from pilothouse.agents.tool_hints import MANY, ToolHint, words

#: "<name> apps": the apps a name or an environment matches ("the ledger-web apps",
#: "staging applications"), a search; a project's apps are asked for as a project's.
_APPS_OF = re.compile(r"(?<![\w/-])([\w/-]+)\s+(?:apps|applications)\b", re.IGNORECASE)
_ENVIRONMENTS = frozenset({"production", "prod", "staging", "stage", "dev", "development",
                           "qa", "uat", "preprod", "sandbox"})
_PROJECT = re.compile(r"\bprojects?\b", re.IGNORECASE)
#: "Which production apps are degraded?" filters by a status (a listing's filter, which the
#: search has not); "are the ledger-web apps all healthy?" asks to see them all, with theirs.
_STATUS_FILTER = re.compile(
    r"\b(?:which|what|list|show|find|how\s+many)\b.*\b(?:degraded|healthy|unhealthy|"
    r"progressing|suspended|missing|unknown|out[\s-]*of[\s-]*sync|outofsync|synced|failing)\b",
    re.IGNORECASE)


def _apps_by_name(question: str) -> bool:
    """Whether `question` asks for the apps of a name or an environment, not a project's and
    not filtered by a status."""
    return not _PROJECT.search(question) and not _STATUS_FILTER.search(question) and any(
        word.lower() in _ENVIRONMENTS or is_name(word) for word in _APPS_OF.findall(question))


def _apps_of_project(question: str) -> bool:
    """Whether `question` asks for the applications of a project."""
    return bool(_PROJECT.search(question) and MANY.search(question))

ARGOCD_HINTS: tuple[ToolHint, ...] = (
    ToolHint(("rollback_application",), words(
        r"\broll(?:ed|ing)?[\s-]*(?:\S+\s+)?back\b|\brollback\b|\brevert\b|"
        r"\bundo\s+the\s+(?:last\s+)?(?:deploy|release|sync)", named=True)),
    ToolHint(("run_resource_action",), words(
        r"\b(?:resource\s+)?(?:actions|operations)\b|\brestart\b|\bscale\b|\bbounce\b|"
        r"\breplicas\b|\broll(?:ing)?\s+(?:the\s+|its\s+)?(?:pods|deployment|workload)",
        named=True)),
    ToolHint(("sync_application",), words(
        r"^\s*(?:please\s+)?(?:re-?)?sync\b(?!\s+(?:status|state))|"
        r"\b(?:dry[\s-]run|preview)\s+(?:of\s+)?(?:a\s+)?sync\b", named=True)),
    ToolHint(("get_application_logs",), words(r"\blogs?\b|\blog\s+lines\b", named=True)),
    ToolHint(("diff_application",), words(
        r"\bdiff\b|\bdrift(?:ed|s)?\b|\bagainst\s+git\b|\bdiffers?\b|\bdifference", named=True)),
    ToolHint(("get_application_events",), words(
        r"\bevents?\b|\bwarnings?\b|\bwhy\b.*\b(?:degraded|failing|unhealthy|broken|down|"
        r"progressing|crash\w*)\b", named=True)),
    ToolHint(("get_application_changes",), words(
        r"\bwhat\s+changed\b|\brecent\s+changes\b|\bchanges\s+(?:to|of|in|for)\b", named=True)),
    ToolHint(("get_application_history",), words(
        r"\bhistory\b|\bdeployed\b|\bdeploys\b|\blast\s+deploy\b|\brevisions?\b|\breleases\b",
        named=True)),
    ToolHint(("get_application_resource_tree",), words(
        r"\bresources?\b|\bpods?\b|\bresource\s+tree\b|\bworkloads?\b", named=True)),
    ToolHint(("get_application",), words(
        r"\bstatus\b|\bhealth\b|\bhealthy\b|\bsynced\b|\bin\s+sync\b|\bdegraded\b|"
        r"^\s*(?:please\s+)?(?:check|inspect|look\s+at|describe)\b", named=True)),
    # "search" asks for the search by name; it matches clusters, projects and repos too.
    ToolHint(("search_argocd_resources",), words(r"\bsearch\b|\bmatching\b")),
    ToolHint(("list_applicationsets",), words(r"\bapplication\s*sets?\b|\bappsets?\b")),
    ToolHint(("search_argocd_resources",), _apps_by_name),
    ToolHint(("list_applications",), _apps_of_project),
    ToolHint(("list_clusters",), words(r"\bclusters\b")),
)

GITHUB_HINTS: tuple[ToolHint, ...] = (
    ToolHint(("get_workflow_run_logs",), words(
        r"\b(?:workflow\s+|actions\s+|ci\s+)?run\s+#?\d{4,}\b|\blogs?\s+of\s+run\b")),
    ToolHint(("list_workflow_runs",), words(
        r"\b(?:workflow|actions|ci)\s+runs?\b|\bbuilds\b|\bpipelines?\b|\bworkflow\b")),
    ToolHint(("list_pull_requests_awaiting_review",), words(
        r"\b(?:wait(?:ing)?|await(?:ing)?|need(?:s|ing)?|pending|ready)\s+(?:for\s+)?"
        r"(?:a\s+|my\s+)?review\b|\breview\s+queue\b")),
    ToolHint(("get_pull_request",), words(r"\b(?:pr|pull\s+request)\s+#?\d+\b|#\d+\b")),
    ToolHint(("compare_commits",), words(
        r"\bbetween\b.*\b(?:deploys|commits|revisions|releases|tags|shas|versions)\b|"
        r"\bcompare\b", named=True)),
    # Search reports the total a count question needs; listings page without one.
    ToolHint(("search_issues",), words(
        r"\bsearch\b|\banywhere\b|\bacross\b|\borgani[sz]ation\b|\blabel(?:l?ed)?\b|"
        r"\bmentioning\b|\bhow\s+many\b")),
    ToolHint(("list_pull_requests",), words(r"\bpull\s+requests\b|\bprs\b", named=True)),
)
