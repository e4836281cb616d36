src_libtopo_a_SOURCES += src/server/log.c src/server/log.h
