# SPDX-License-Identifier: Apache-2.0
# Shared test support. Unit tests and integration scripts are declared in the
# local.mk of the folder whose code they test.
EXTRA_DIST += tests/integration/lib.sh tests/skip-allowed
# lib.sh's server ports lie outside the kernel's ephemeral range
TESTS += tests/integration/lib_ports.sh
EXTRA_DIST += tests/integration/lib_ports.sh

# The shape of the tree: layering rules and a repository that stands alone.
TESTS += tests/layering.sh
EXTRA_DIST += tests/layering.sh tests/call-cycles.known
TESTS += tests/license.sh
EXTRA_DIST += tests/license.sh LICENSE scripts/spdx scripts/free-port

# Reloads (SIGUSR1) while kubesim churns and clients query: kubernetes,
# topology, cache, prometheus, forward.
TESTS += tests/integration/reload_churn.sh
EXTRA_DIST += tests/integration/reload_churn.sh
# The ThreadSanitizer stage of scripts/test (unit tests + reload_churn.sh):
# liburcu annotations linked into its programs, and its report summary.
EXTRA_DIST += tests/tsan_urcu.c tests/tsan.supp tests/tsan_summary.py
# tests/valgrind.sh's suppressions (libre2's sparse sets)
EXTRA_DIST += tests/valgrind.supp
include tests/kubesim/local.mk
include tests/chaos/local.mk
include tests/fuzz/local.mk
