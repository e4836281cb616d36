# kubesim: in-memory Kubernetes API server for tests
