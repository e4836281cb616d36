src_libtopo_a_SOURCES += src/corefile/corefile.h
