# Shared test support. Unit tests and integration scripts are declared in the
# local.mk of the folder whose code they test.
EXTRA_DIST += tests/integration/lib.sh tests/skip-allowed
include tests/kubesim/local.mk
