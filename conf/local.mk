# Deployment: the Kubernetes manifests (conf/kubernetes/, rendered by
# conf/kubernetes/render).
TESTS += tests/integration/manifests.sh
EXTRA_DIST += tests/integration/manifests.sh \
	conf/kubernetes/kube-dns.yaml conf/kubernetes/node-local.yaml conf/kubernetes/render
