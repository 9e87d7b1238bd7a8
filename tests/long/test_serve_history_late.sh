#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/e2e/test_serve_history.sh with its pulls a minute after the spike
# (issue 34: "a profile pulled 60 s later for [T-5 s, T+10 s] charges the
# spike to that function"): a 2-minute look-back keeps the windows, the
# same checks.
export TEST_BUDGET_S=${TEST_BUDGET_S:-150}
HISTORY_MIN=2 PULL_DELAY_S=60 exec "$(dirname "$0")/../e2e/test_serve_history.sh"
