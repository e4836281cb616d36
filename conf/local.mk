# SPDX-License-Identifier: Apache-2.0
# Deployment: the Kubernetes manifests (conf/kubernetes/, rendered by
# conf/kubernetes/render) and the container image (conf/Containerfile for a
# registry build; scripts/image builds the same image offline with podman
# from this build's binary, assembled by scripts/image-rootfs).
TESTS += tests/integration/manifests.sh tests/integration/image.sh tests/integration/image_find.sh
EXTRA_DIST += tests/integration/manifests.sh tests/integration/image.sh tests/integration/image_find.sh \
	conf/kubernetes/kube-dns.yaml conf/kubernetes/node-local.yaml conf/kubernetes/render \
	conf/Containerfile scripts/image scripts/image-rootfs

# Corefiles of Kubernetes distributions and CoreDNS's READMEs
# (tests/data/corefiles/) load unchanged and answer.
TESTS += tests/integration/corefiles.sh
EXTRA_DIST += tests/integration/corefiles.sh tests/data/corefiles/kubespray.Corefile \
	tests/data/corefiles/kops-ipv6.Corefile tests/data/corefiles/hosts-wildcard.Corefile \
	tests/data/corefiles/loadbalance-weighted.Corefile tests/data/corefiles/objects.yaml
