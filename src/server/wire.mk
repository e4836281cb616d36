src_libtopo_a_SOURCES += src/server/dname.c src/server/dname.h src/server/msg.c src/server/msg.h
