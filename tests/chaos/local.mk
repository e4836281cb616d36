# SPDX-License-Identifier: Apache-2.0
# Chaos with an oracle (tests/chaos/chaos.sh, driven by chaos.py): kubesim's
# faults and churn against the real topodns, answers compared with kubesim's
# state. `make check` runs the short form (35 s of faults); `make chaos` the
# long one (300 s, or CHAOS_SECONDS).
TESTS += tests/chaos/chaos.sh
EXTRA_DIST += tests/chaos/chaos.sh tests/chaos/chaos.py

CHAOS_SECONDS ?= 300
.PHONY: chaos
chaos: all
	$(AM_TESTS_ENVIRONMENT) CHAOS_SECONDS=$(CHAOS_SECONDS) $(SHELL) $(srcdir)/tests/chaos/chaos.sh
