# src/common: what every layer may use (log lines, Go formats, file reads,
# resolv.conf search lists).
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = \
	src/common/log.c src/common/log.h \
	src/common/gofmt.c src/common/gofmt.h \
	src/common/file.c src/common/file.h \
	src/common/resolvconf.c src/common/resolvconf.h
