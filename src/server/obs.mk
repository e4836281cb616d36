src_libtopo_a_SOURCES += src/server/metrics.h src/server/http.h
