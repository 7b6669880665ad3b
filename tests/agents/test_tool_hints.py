"""First-call tool hints: a request's plain words for a tool offer that tool alone."""

from __future__ import annotations

import pytest

from pilothouse.agents.hint_tables import ARGOCD_HINTS, GITHUB_HINTS
from pilothouse.agents.question_parts import names_resource
from pilothouse.agents.tool_hints import hinted_tools


@pytest.mark.parametrize(("question", "tool"), [
    ("Roll ledger-api-qa back to where it was yesterday", "rollback_application"),
    ("revert the last sync of ledger-api-qa", "rollback_application"),
    ("What can I do to the web Deployment of ledger-api-qa? List its actions",
     "run_resource_action"),
    ("bounce the pods of ledger-api-qa", "run_resource_action"),
    ("roll the pods of the web Deployment in ledger-api-qa", "run_resource_action"),
    ("sync ledger-api-qa", "sync_application"),
    ("tail the logs of ledger-api-qa", "get_application_logs"),
    ("has ledger-api-qa drifted from its manifests?", "diff_application"),
    ("any warnings on ledger-api-qa?", "get_application_events"),
    ("why is ledger-api-qa failing", "get_application_events"),
    ("what changed in ledger-api-qa this week", "get_application_changes"),
    ("which revision of ledger-api-qa is deployed?", "get_application_history"),
    ("list the pods of ledger-api-qa", "get_application_resource_tree"),
    ("is ledger-api-qa healthy?", "get_application"),
    ("Sync status of ledger-api-qa", "get_application"),
    ("show every ApplicationSet", "list_applicationsets"),
    ("which clusters are registered?", "list_clusters"),
    ("search the clusters for kind-ledger-1", "search_argocd_resources"),
    ("Check ledger-api-qa, please", "get_application"),
    ("look at ledger-api-qa in Argo CD", "get_application"),
    ("are the ledger-web apps all healthy?", "search_argocd_resources"),  # apps of a name
    ("show me the staging applications", "search_argocd_resources"),  # of an environment
    ("which apps does the project ledger own?", "list_applications"),
    ("in project ledger, which applications are Progressing?", "list_applications"),
    ("Which ApplicationSets does the ledger project own?", "list_applicationsets"),
])
def test_argocd_words_name_their_tool(question: str, tool: str) -> None:
    assert hinted_tools(question, ARGOCD_HINTS) == (tool,)


@pytest.mark.parametrize("question", [
    "Which apps are degraded?",                        # no application named
    "list the applications of team ledger-core with failing health",  # many apps
    "Are there out-of-sync apps in staging?",          # a hyphenated word, not a name
    "check the apps of ledger-core",                   # many apps, no name before "apps"
    "which staging apps are degraded?",                # a status filter: the listing's
    "hello",
])
def test_a_question_without_one_named_app_keeps_the_whole_menu(question: str) -> None:
    assert hinted_tools(question, ARGOCD_HINTS) == ()


@pytest.mark.parametrize(("question", "tool"), [
    ("why did run 5512004 of octo/ledger break?", "get_workflow_run_logs"),
    ("recent CI runs on octo/ledger", "list_workflow_runs"),
    ("which PRs in octo/ledger need review?", "list_pull_requests_awaiting_review"),
    ("what is PR 88 of octo/ledger about?", "get_pull_request"),
    ("find issues mentioning flaky tests across the organization", "search_issues"),
    ("how many bugs are open in octo/ledger?", "search_issues"),
    ("the PRs merged between the last two releases of octo/ledger", "compare_commits"),
    ("open pull requests in octo/ledger", "list_pull_requests"),
])
def test_github_words_name_their_tool(question: str, tool: str) -> None:
    assert hinted_tools(question, GITHUB_HINTS) == (tool,)


def test_hyphenated_words_are_not_names() -> None:
    assert names_resource("restart ledger-api-qa") and names_resource("octo/ledger issues")
    assert not names_resource("show out-of-sync and auto-sync apps with a dry-run")
