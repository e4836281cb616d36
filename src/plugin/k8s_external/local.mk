src_plugin_libplugins_a_SOURCES += src/plugin/k8s_external/k8s_external.c
TESTS += tests/integration/k8s_external.sh
EXTRA_DIST += tests/integration/k8s_external.sh src/plugin/k8s_external/README.md \
	tests/data/kubernetes/k8s_external.yaml
