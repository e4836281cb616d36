# Server core. wire.mk (names, messages) and obs.mk (metrics, http) are
# kept apart so the wire library stays independent of the server.
include src/server/wire.mk
include src/server/obs.mk
src_libtopo_a_SOURCES += \
	src/server/core.h \
	src/server/request.c src/server/request.h \
	src/server/server.c src/server/server.h \
	src/server/listener.c \
	src/server/zone.c src/server/zone.h \
	src/server/log.c src/server/log.h \
	src/server/periodic.c src/server/periodic.h
TESTS += tests/integration/server.sh
EXTRA_DIST += tests/integration/server.sh tests/integration/rawdns.py
TESTS += tests/integration/process.sh
EXTRA_DIST += tests/integration/process.sh
