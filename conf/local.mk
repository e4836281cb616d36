# Deployment: the Kubernetes manifests (conf/kubernetes/, rendered by
# conf/kubernetes/render) and the container image (conf/Containerfile for a
# registry build; scripts/image builds the same image offline with podman
# from this build's binary, assembled by scripts/image-rootfs).
TESTS += tests/integration/manifests.sh tests/integration/image.sh tests/integration/image_find.sh
EXTRA_DIST += tests/integration/manifests.sh tests/integration/image.sh tests/integration/image_find.sh \
	conf/kubernetes/kube-dns.yaml conf/kubernetes/node-local.yaml conf/kubernetes/render \
	conf/Containerfile scripts/image scripts/image-rootfs
