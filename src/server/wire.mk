src_libtopo_a_SOURCES += src/server/dname.h src/server/msg.h
