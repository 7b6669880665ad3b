"""The grounding check keeps what the conversation supports and removes what it does not."""

from __future__ import annotations

from pilothouse.context.grounding import Sources, claims, ground

RESULT = ("PAGE 1 of 41 (819 applications). | payments-api-dev | payments | Synced | "
          "repo https://github.com/acme-corp/analytics-deploy.git path apps/api/overlays/dev "
          "revision fe9a8af28738ce47beef05efaa0cdbb7aa0cdbb7, 1,200 matches")


def test_numbers_paths_names_and_shas_are_claims_and_words_are_not() -> None:
    found = [c.text for c in claims(
        "There are 819 apps; payments-api-dev is read-only, see src/orders/db.py, commit "
        "fe9a8af and retry.py (dry-run first).")]
    assert found == ["819", "payments-api-dev", "src/orders/db.py", "fe9a8af", "retry.py"]


def test_supported_claims_stay_in_any_spelling_the_source_allows() -> None:
    text = ("819 applications, 1200 matches. payments-api-dev is synced; it deploys "
            "acme-corp/analytics-deploy from apps/api/overlays/dev at fe9a8af.")
    grounded = ground(text, Sources([RESULT]))
    assert grounded.text == text and grounded.removed == ()


def test_a_sentence_with_an_invented_name_or_number_is_removed_and_named() -> None:
    text = ("There are 819 applications. payments-api-prod is Degraded and 57 more are "
            "failing.\nAsk for page 2 for more.")
    grounded = ground(text, Sources([RESULT, "Ask for page 2"]))
    assert grounded.text == "There are 819 applications. \nAsk for page 2 for more."
    assert set(grounded.removed) == {"payments-api-prod", "57"}


def test_a_code_block_with_an_invented_path_is_removed_whole() -> None:
    text = "Run this:\n```\nkubectl apply -f deploy/orders-canary.yaml\n```\nThen check."
    grounded = ground(text, Sources(["kubectl apply"]))
    assert "orders-canary" not in grounded.text and "Run this:" in grounded.text
    assert grounded.removed == ("deploy/orders-canary.yaml",)


def test_the_digits_of_a_name_or_an_option_support_no_count() -> None:
    # A count the model made up is not backed by a region's "1", a pool's "3" or the "5" of
    # the command it chose (`git log -5`); a number the result states, or a date's, is.
    sources = Sources(["`git log --oneline -5` exited 0: 276e6ed Import the orders service",
                       "cluster gke-prod-eu-west-1, node-pool-3, deployed 2026-07-31, 2 apps"])
    text = ("There are 5 uncommitted changes. Pool 3 has 1 node. gke-prod-eu-west-1 runs "
            "2 apps, deployed on the 31st (31).")
    grounded = ground(text, sources)
    assert grounded.text == "gke-prod-eu-west-1 runs 2 apps, deployed on the 31st (31)."
    assert set(grounded.removed) == {"5", "3", "1"}
    # A name's own digits are no claim of their own: the name is checked whole.
    assert [c.text for c in claims("eu-west-1 and git log -5")] == ["eu-west-1"]
