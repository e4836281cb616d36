#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""kubesim_pyclient.py URL — drive kubesim with the official Python client.

Run by kubesim_pyclient.sh against a fresh kubesim at URL. Every check
prints "PASS name" or "FAIL name: what was seen"; the exit status is 1 when
any check failed (2 when the script itself broke). Checks: version and
discovery (the client asks with a trailing slash), paginated lists
(limit/continue over one revision), label and field selectors, create,
replace (and a stale replace), strategic-merge, JSON-merge and JSON patch
(a failed "test" op), status subresources of a Pod and a Service, delete
with propagationPolicy/gracePeriodSeconds/preconditions, delete-collection,
watches (kubernetes.watch.Watch: ADDED/MODIFIED/DELETED, bookmarks), boolean
query parameters as the apiserver reads them, events.k8s.io/v1 create/list.
"""
import datetime
import json
import sys
import threading
import urllib.error
import urllib.request

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

URL = sys.argv[1]
NS = "py"
FAILED = []


def check(name, ok, seen=""):
    if ok:
        print("PASS " + name)
    else:
        FAILED.append(name)
        print("FAIL %s: %s" % (name, seen))
    sys.stdout.flush()


def api_error(fn, *args, **kwargs):
    """The ApiException fn raises (status, body as a dict), or None."""
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        try:
            body = json.loads(e.body) if e.body else {}
        except ValueError:
            body = {"raw": e.body}
        return e.status, body
    return None


def raw(path):
    """GET URL+path with urllib: (status, body text)."""
    try:
        with urllib.request.urlopen(URL + path, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def rv(obj):
    return int(obj.metadata.resource_version)


cfg = client.Configuration()
cfg.host = URL
api = client.ApiClient(cfg)
core = client.CoreV1Api(api)


def merge_patch(path, params, body, response_type):
    """A JSON merge patch (the generated methods send strategic merge for a
    dict and JSON patch for a list)."""
    return api.call_api(path, "PATCH", params, [],
                        {"Content-Type": "application/merge-patch+json",
                         "Accept": "application/json"},
                        body=body, response_type=response_type,
                        auth_settings=["BearerToken"], _return_http_data_only=True)


def pod(name, labels, node):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1PodSpec(node_name=node, containers=[client.V1Container(
            name="app", image="registry.example/app:1",
            env=[client.V1EnvVar(name="A", value="1")])]))


# ------------------------------------------------------------ version, discovery
ver = client.VersionApi(api).get_code()
code, body = raw("/version")
plain = json.loads(body) if code == 200 else {}
check("version: /version/ as /version", ver.git_version == plain.get("gitVersion")
      and ver.major == plain.get("major") and ver.minor == plain.get("minor")
      and ver.git_version, "%s vs %s" % (ver, body))

res = core.get_api_resources()
names = [r.name for r in res.resources]
check("discovery: /api/v1/ lists pods, pods/status, services/status",
      res.group_version == "v1" and {"pods", "pods/status", "services/status"} <= set(names),
      names)
check("discovery: /api/ lists v1", client.CoreApi(api).get_api_versions().versions == ["v1"])
groups = client.ApisApi(api).get_api_versions()
gnames = [g.name for g in groups.groups]
check("discovery: /apis/ lists events.k8s.io", "events.k8s.io" in gnames
      and "discovery.k8s.io" in gnames, gnames)
ev_group = client.EventsApi(api).get_api_group()
check("discovery: /apis/events.k8s.io/", ev_group.preferred_version.group_version ==
      "events.k8s.io/v1", ev_group)
ev_res = client.EventsV1Api(api).get_api_resources()
check("discovery: /apis/events.k8s.io/v1/ serves Event",
      [(r.name, r.kind, r.namespaced) for r in ev_res.resources] == [("events", "Event", True)],
      ev_res)

# ------------------------------------------------------------ create, pagination
ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
check("create namespace", ns.metadata.name == NS and ns.status.phase == "Active", ns.status)

created = []
for i in range(7):
    app = "web" if i % 2 == 0 else "db"
    tier = "front" if i < 4 else "back"
    p = core.create_namespaced_pod(NS, pod("pod-%d" % i, {"app": app, "tier": tier},
                                          "node-a" if i < 3 else "node-b"))
    created.append(p)
check("create pods: uid, resourceVersion, Pending",
      all(p.metadata.uid and rv(p) > 0 and p.status.phase == "Pending" for p in created)
      and len({rv(p) for p in created}) == 7)
all_names = sorted(p.metadata.name for p in created)

page1 = core.list_namespaced_pod(NS, limit=3)
check("list limit=3: 3 items, continue, remainingItemCount 4",
      len(page1.items) == 3 and page1.metadata._continue and
      page1.metadata.remaining_item_count == 4,
      (len(page1.items), page1.metadata))
# a pod created between pages is not in the later ones (one revision)
late = core.create_namespaced_pod(NS, pod("pod-late", {"app": "late"}, "node-c"))
page2 = core.list_namespaced_pod(NS, limit=3, _continue=page1.metadata._continue)
page3 = core.list_namespaced_pod(NS, limit=3, _continue=page2.metadata._continue)
got = [p.metadata.name for pg in (page1, page2, page3) for p in pg.items]
check("list pages: every pod once, in key order, at the first page's revision",
      got == all_names and not page3.metadata._continue and
      page1.metadata.resource_version == page2.metadata.resource_version ==
      page3.metadata.resource_version and len(page3.items) == 1, got)
full = core.list_namespaced_pod(NS)
check("list without limit: the later pod too, newer revision",
      [p.metadata.name for p in full.items] == sorted(all_names + ["pod-late"]) and
      int(full.metadata.resource_version) >= rv(late), [p.metadata.name for p in full.items])
allns = core.list_pod_for_all_namespaces(limit=5)
check("list all namespaces limit=5", len(allns.items) == 5 and allns.metadata._continue,
      len(allns.items))

# ------------------------------------------------------------ selectors
def sel(**kw):
    return sorted(p.metadata.name for p in core.list_namespaced_pod(NS, **kw).items)


check("labelSelector app=web", sel(label_selector="app=web") ==
      ["pod-0", "pod-2", "pod-4", "pod-6"], sel(label_selector="app=web"))
check("labelSelector app in (web,db),tier!=front",
      sel(label_selector="app in (web,db),tier!=front") == ["pod-4", "pod-5", "pod-6"],
      sel(label_selector="app in (web,db),tier!=front"))
check("labelSelector !tier", sel(label_selector="!tier") == ["pod-late"],
      sel(label_selector="!tier"))
check("fieldSelector spec.nodeName=node-a", sel(field_selector="spec.nodeName=node-a") ==
      ["pod-0", "pod-1", "pod-2"], sel(field_selector="spec.nodeName=node-a"))
check("fieldSelector metadata.name!=pod-0 + labelSelector app=web",
      sel(field_selector="metadata.name!=pod-0", label_selector="app=web") ==
      ["pod-2", "pod-4", "pod-6"])
err = api_error(core.list_namespaced_pod, NS, field_selector="spec.bogus=1")
check("fieldSelector on an unsupported field: 400", err and err[0] == 400 and
      "field label not supported" in err[1].get("message", ""), err)

# ------------------------------------------------------------ replace, patches
p0 = core.read_namespaced_pod("pod-0", NS)
p0.metadata.labels["replaced"] = "yes"
p0r = core.replace_namespaced_pod("pod-0", NS, p0)
check("replace: label set, new resourceVersion",
      p0r.metadata.labels.get("replaced") == "yes" and rv(p0r) > rv(p0), p0r.metadata)
err = api_error(core.replace_namespaced_pod, "pod-0", NS, p0)  # p0 has the old RV
check("replace with a stale resourceVersion: 409 Conflict",
      err and err[0] == 409 and err[1].get("reason") == "Conflict", err)

smp = core.patch_namespaced_pod("pod-0", NS, {"metadata": {"labels": {"smp": "1"}}})
check("strategic merge patch: label added, others kept",
      smp.metadata.labels == {"app": "web", "tier": "front", "replaced": "yes", "smp": "1"},
      smp.metadata.labels)
mp = merge_patch("/api/v1/namespaces/{namespace}/pods/{name}", {"namespace": NS, "name": "pod-0"},
                 {"metadata": {"labels": {"smp": None, "merge": "2"},
                               "annotations": {"a": "b"}}}, "V1Pod")
check("JSON merge patch: null removes, label and annotation added",
      mp.metadata.labels == {"app": "web", "tier": "front", "replaced": "yes", "merge": "2"}
      and mp.metadata.annotations == {"a": "b"}, mp.metadata)

ops = [
    {"op": "test", "path": "/metadata/labels/merge", "value": "2"},
    {"op": "add", "path": "/metadata/labels/example.com~1team", "value": "dns"},
    {"op": "replace", "path": "/metadata/labels/tier", "value": "middle"},
    {"op": "remove", "path": "/metadata/labels/replaced"},
    {"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/annotations/app"},
    {"op": "move", "from": "/metadata/annotations/a", "path": "/metadata/annotations/moved"},
    {"op": "add", "path": "/spec/containers/0/env/-", "value": {"name": "B", "value": "2"}},
    {"op": "add", "path": "/spec/containers/0/env/0", "value": {"name": "Z", "value": "0"}},
]
jp = core.patch_namespaced_pod("pod-0", NS, ops)
check("JSON patch: test/add (~1)/replace/remove/copy/move, array - and index",
      jp.metadata.labels == {"app": "web", "tier": "middle", "merge": "2",
                             "example.com/team": "dns"} and
      jp.metadata.annotations == {"app": "web", "moved": "b"} and
      [(e.name, e.value) for e in jp.spec.containers[0].env] == [("Z", "0"), ("A", "1"),
                                                                  ("B", "2")] and
      rv(jp) > rv(mp), (jp.metadata, jp.spec.containers[0].env))
err = api_error(core.patch_namespaced_pod, "pod-0", NS,
                [{"op": "test", "path": "/metadata/labels/app", "value": "db"},
                 {"op": "add", "path": "/metadata/labels/x", "value": "y"}])
after = core.read_namespaced_pod("pod-0", NS)
check("JSON patch with a failed test: 422 Invalid, nothing applied",
      err and err[0] == 422 and err[1].get("reason") == "Invalid" and
      "x" not in after.metadata.labels and rv(after) == rv(jp), (err, after.metadata))
err = api_error(core.patch_namespaced_pod, "pod-0", NS,
                [{"op": "remove", "path": "/metadata/labels/nonexistent"}])
check("JSON patch removing a missing key: 422", err and err[0] == 422, err)
err = api_error(core.patch_namespaced_pod, "pod-0", NS,
                [{"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}])
check("JSON patch to a stale resourceVersion: 409 Conflict", err and err[0] == 409, err)

# ------------------------------------------------------------ status subresources
st = core.patch_namespaced_pod_status("pod-1", NS, {
    "metadata": {"labels": {"via-status": "x"}},
    "status": {"phase": "Running", "podIP": "10.1.2.3",
               "conditions": [{"type": "Ready", "status": "True"}]}})
check("pod status patch: status set, metadata change ignored",
      st.status.phase == "Running" and st.status.pod_ip == "10.1.2.3" and
      "via-status" not in st.metadata.labels, (st.status.phase, st.metadata.labels))
check("fieldSelector status.phase=Running", sel(field_selector="status.phase=Running") ==
      ["pod-1"], sel(field_selector="status.phase=Running"))
svc = core.create_namespaced_service(NS, client.V1Service(
    metadata=client.V1ObjectMeta(name="lb"),
    spec=client.V1ServiceSpec(type="LoadBalancer", selector={"app": "web"},
                              ports=[client.V1ServicePort(port=80)])))
svc_s = core.patch_namespaced_service_status("lb", NS, {
    "spec": {"clusterIP": "10.96.99.99"},
    "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}})
check("service status patch: ingress set, spec change ignored",
      [i.ip for i in svc_s.status.load_balancer.ingress] == ["192.0.2.10"] and
      svc_s.spec.cluster_ip == svc.spec.cluster_ip and svc.spec.cluster_ip,
      (svc_s.status, svc_s.spec.cluster_ip))
svc_s.status.load_balancer.ingress[0].ip = "192.0.2.11"
svc_r = core.replace_namespaced_service_status("lb", NS, svc_s)
check("service status replace", svc_r.status.load_balancer.ingress[0].ip == "192.0.2.11"
      and rv(svc_r) > rv(svc_s), svc_r.status)
read_s = core.read_namespaced_service_status("lb", NS)
check("service status read", read_s.status.load_balancer.ingress[0].ip == "192.0.2.11")

# ------------------------------------------------------------ watch
cm0 = core.create_namespaced_config_map(NS, client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="marker"), data={"k": "v"}))
events, started, done = [], threading.Event(), threading.Event()


def watcher():
    w = watch.Watch()
    try:
        for ev in w.stream(core.list_namespaced_config_map, NS, timeout_seconds=60):
            events.append((ev["type"], ev["object"].metadata.name, ev["object"]))
            if ev["object"].metadata.name == "marker":
                started.set()
            if ev["type"] == "DELETED" and ev["object"].metadata.name == "w1":
                w.stop()
    except Exception as e:  # reported by the check below
        events.append(("EXCEPTION", repr(e), None))
        started.set()
    done.set()


t = threading.Thread(target=watcher, daemon=True)
t.start()
check("watch: the current object arrives as ADDED", started.wait(30) and events and
      events[0][:2] == ("ADDED", "marker"), events[:1])
w1 = core.create_namespaced_config_map(NS, client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="w1"), data={"n": "1"}))
w1p = core.patch_namespaced_config_map("w1", NS, {"data": {"n": "2"}})
core.delete_namespaced_config_map("w1", NS)
done.wait(30)
seen = [(e[0], e[1]) for e in events]
mine = [e for e in events if e[1] == "w1"]
check("watch (watch=True): ADDED, MODIFIED, DELETED of w1 in order",
      [e[0] for e in mine] == ["ADDED", "MODIFIED", "DELETED"] and
      mine[1][2].data == {"n": "2"} and rv(mine[0][2]) == rv(w1) and
      rv(mine[1][2]) == rv(w1p) and rv(mine[2][2]) > rv(w1p), seen)

# resume from a resourceVersion: only the later events, then a bookmark
w = watch.Watch()
got = []
for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=str(rv(cm0)),
                   allow_watch_bookmarks=True, timeout_seconds=3):
    obj = ev["raw_object"]
    got.append((ev["type"], obj["metadata"].get("name"),
                int(obj["metadata"]["resourceVersion"])))
types = [g[0] for g in got]
check("watch from a resourceVersion replays w1's events only",
      [g[:2] for g in got if g[0] != "BOOKMARK"] ==
      [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")], got)
check("watch allowWatchBookmarks=True: a BOOKMARK before the timeout",
      "BOOKMARK" in types and all(g[2] >= rv(cm0) for g in got if g[0] == "BOOKMARK"), got)

# boolean query parameters, as the apiserver reads them
base = "/api/v1/namespaces/%s/configmaps?timeoutSeconds=1&" % NS
for v in ("true", "True", "TRUE", "1", "t", "yes", "", None):
    code, body = raw(base + ("watch" if v is None else "watch=" + v))
    first = json.loads(body.splitlines()[0]) if body.strip() else {}
    check("%s is a watch" % ("watch" if v is None else "watch=" + (v or '""')), code == 200 and first.get("type") == "ADDED",
          (code, body[:120]))
for v in ("false", "False", "FALSE", "0"):
    code, body = raw(base + "watch=" + v)
    check("watch=%s is a list" % v, code == 200 and
          json.loads(body).get("kind") == "ConfigMapList", (code, body[:120]))

# ------------------------------------------------------------ delete
err = api_error(core.delete_namespaced_pod, "pod-2", NS, propagation_policy="Bogus")
check("delete with propagationPolicy=Bogus: 422 on propagationPolicy",
      err and err[0] == 422 and err[1]["details"]["kind"] == "DeleteOptions" and
      err[1]["details"]["causes"][0]["field"] == "propagationPolicy", err)
p2 = core.read_namespaced_pod("pod-2", NS)
err = api_error(core.delete_namespaced_pod, "pod-2", NS, body=client.V1DeleteOptions(
    preconditions=client.V1Preconditions(uid="00000000-0000-0000-0000-000000000000")))
check("delete with a wrong uid precondition: 409", err and err[0] == 409, err)
err = api_error(core.delete_namespaced_pod, "pod-2", NS, body=client.V1DeleteOptions(
    preconditions=client.V1Preconditions(resource_version=str(rv(p2) - 1))))
check("delete with a stale resourceVersion precondition: 409", err and err[0] == 409, err)
core.delete_namespaced_pod("pod-2", NS, body=client.V1DeleteOptions(
    grace_period_seconds=0, propagation_policy="Background",
    preconditions=client.V1Preconditions(uid=p2.metadata.uid,
                                         resource_version=p2.metadata.resource_version)))
err = api_error(core.read_namespaced_pod, "pod-2", NS)
check("delete with matching preconditions: gone (404)", err and err[0] == 404, err)
core.delete_namespaced_pod("pod-3", NS, grace_period_seconds=0, propagation_policy="Background")
check("delete with gracePeriodSeconds=0 in the query: gone",
      api_error(core.read_namespaced_pod, "pod-3", NS)[0] == 404)

dc = core.delete_collection_namespaced_pod(NS, label_selector="app=db")
left = sel()
check("delete-collection app=db: only the db pods gone",
      left == ["pod-0", "pod-4", "pod-6", "pod-late"], left)
err = api_error(core.delete_collection_namespaced_pod, NS, propagation_policy="Sometimes")
check("delete-collection with a bad propagationPolicy: 422, nothing deleted",
      err and err[0] == 422 and sel() == left, err)

# ------------------------------------------------------------ events.k8s.io/v1
evapi = client.EventsV1Api(api)
when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)
ev = evapi.create_namespaced_event(NS, client.EventsV1Event(
    metadata=client.V1ObjectMeta(name="pod-0.1"), event_time=when, reason="Started",
    note="container started", action="Start", type="Normal",
    reporting_controller="example.com/kubelet", reporting_instance="node-a",
    regarding=client.V1ObjectReference(kind="Pod", namespace=NS, name="pod-0")))
check("events.k8s.io/v1 create", ev.metadata.uid and ev.event_time == when and
      ev.regarding.name == "pod-0" and ev.note == "container started", ev)
evapi.create_namespaced_event(NS, client.EventsV1Event(
    metadata=client.V1ObjectMeta(name="pod-4.1", labels={"k": "v"}), event_time=when,
    reason="Pulled", action="Pull", type="Normal", reporting_controller="c",
    reporting_instance="i"))
evl = evapi.list_namespaced_event(NS)
check("events.k8s.io/v1 list", [e.metadata.name for e in evl.items] == ["pod-0.1", "pod-4.1"]
      and evl.items[0].reason == "Started", [e.metadata.name for e in evl.items])
evs = evapi.list_event_for_all_namespaces(label_selector="k=v")
check("events.k8s.io/v1 list all namespaces with a label selector",
      [e.metadata.name for e in evs.items] == ["pod-4.1"], evs.items)

print("%d checks failed" % len(FAILED) if FAILED else "all checks passed")
sys.exit(1 if FAILED else 0)
