src_plugin_libplugins_a_SOURCES += src/plugin/view/view.c src/plugin/view/expr.c \
	src/plugin/view/expr.h
TESTS += tests/integration/view.sh
EXTRA_DIST += tests/integration/view.sh src/plugin/view/README.md
