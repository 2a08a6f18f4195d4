"""The fake Kubernetes API's fieldSelector, which the metrics.k8s.io tests rely on to stand for
the real API server: LISTs hold back the pods that do not match, and a watch of
status.phase=Running sees a pod that stops running as DELETED. No adapter: the fake is asked
directly, with the adapter's metadata-only Accept headers."""

import json
import os
import ssl
import unittest
import urllib.error
import urllib.parse
import urllib.request

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
CREATED = "2024-05-01T10:00:00Z"
PODS = [
    {"name": "web-0", "namespace": "a", "labels": {"app": "web"}, "creationTimestamp": CREATED},
    {"name": "web-1", "namespace": "a", "labels": {"app": "web"}, "phase": "Running"},
    {"name": "done", "namespace": "a", "phase": "Succeeded"},
    {"name": "new", "namespace": "b", "phase": ""},  # no phase yet: not Running
    {"name": "web-2", "namespace": "b"},
]
PROCS = KUBE = None


def setUpModule():
    global PROCS, KUBE
    PROCS = harness.Processes()
    try:
        KUBE = harness.FakeKube(PROCS, {"pods": PODS, "nodes": [{"name": "node-1"}]})
    except BaseException:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def request(path, accept, **query):
    context = ssl.create_default_context(cafile=os.path.join(KUBE.dir, "ca.crt"))
    url = KUBE.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
    return urllib.request.urlopen(
        urllib.request.Request(url, headers={"Authorization": "Bearer " + KUBE.TOKEN,
                                             "Accept": accept}), timeout=10, context=context)


def listed(path, **query):
    with request(path, LIST_ACCEPT, **query) as response:
        body = json.loads(response.read().decode())
    return body, ["%s/%s" % (item["metadata"].get("namespace", ""), item["metadata"]["name"])
                  for item in body["items"]]


def expected(predicate):
    return ["%s/%s" % (p["namespace"], p["name"]) for p in PODS if predicate(p)]


def running(pod):
    return pod.get("phase", "Running") == "Running"


class FieldSelectorTest(unittest.TestCase):
    def test_lists_filter_on_phase_name_and_namespace(self):
        cases = [
            ("status.phase=Running", "/api/v1/pods", running),
            ("status.phase==Running", "/api/v1/pods", running),
            ("status.phase!=Running", "/api/v1/pods", lambda p: not running(p)),
            ("status.phase=Running", "/api/v1/namespaces/b/pods",
             lambda p: running(p) and p["namespace"] == "b"),
            ("metadata.namespace=a,status.phase=Running", "/api/v1/pods",
             lambda p: running(p) and p["namespace"] == "a"),
            ("metadata.name=web-2", "/api/v1/pods", lambda p: p["name"] == "web-2"),
            ("", "/api/v1/pods", lambda p: True),
        ]
        for selector, path, predicate in cases:
            with self.subTest(selector=selector, path=path):
                _, names = listed(path, fieldSelector=selector, limit=2)
                # limit=2 pages: the first page is the first two of the selection.
                self.assertEqual(expected(predicate)[:2], names)

    def test_metadata_carries_the_creation_timestamp(self):
        body, _ = listed("/api/v1/pods", fieldSelector="metadata.name=web-0")
        self.assertEqual(CREATED, body["items"][0]["metadata"]["creationTimestamp"])
        body, _ = listed("/api/v1/pods", fieldSelector="metadata.name=web-1")
        self.assertRegex(body["items"][0]["metadata"]["creationTimestamp"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_an_unsupported_field_is_a_bad_request(self):
        for path, selector in [("/api/v1/pods", "spec.nodeName=node-1"),
                               ("/api/v1/nodes", "status.phase=Running")]:
            with self.subTest(path=path, selector=selector):
                with self.assertRaises(urllib.error.HTTPError) as raised:
                    listed(path, fieldSelector=selector)
                self.assertEqual(400, raised.exception.code)
                body = json.loads(raised.exception.read().decode())
                self.assertIn("field label not supported", body["message"])

    def test_a_watch_of_running_pods_sees_a_pod_that_stops_running_as_deleted(self):
        # Its own namespace: the other tests list the fixture's pods as they are.
        KUBE.change_object("add", "pods", {"name": "job", "namespace": "w",
                                           "creationTimestamp": CREATED})
        KUBE.change_object("add", "pods", {"name": "done", "namespace": "w",
                                           "phase": "Succeeded"})
        body, names = listed("/api/v1/namespaces/w/pods", fieldSelector="status.phase=Running")
        self.assertEqual(["w/job"], names)
        changes = [
            ("modify", {"name": "job", "namespace": "w", "phase": "Succeeded"}),
            ("modify", {"name": "done", "namespace": "w", "phase": "Running"}),
            ("modify", {"name": "done", "namespace": "w", "labels": {"v": "2"}}),
            ("add", {"name": "elsewhere", "namespace": "x"}),
            ("add", {"name": "pending", "namespace": "w", "phase": "Pending"}),
        ]
        versions = [KUBE.change_object(op, "pods", obj) for op, obj in changes]
        selected = self.watch_events("/api/v1/namespaces/w/pods", body, 3,
                                     fieldSelector="status.phase=Running")
        self.assertEqual([("DELETED", "job", versions[0]), ("ADDED", "done", versions[1]),
                          ("MODIFIED", "done", versions[2])], selected)
        everything = self.watch_events("/api/v1/namespaces/w/pods", body, 4)
        self.assertEqual([("MODIFIED", "job", versions[0]), ("MODIFIED", "done", versions[1]),
                          ("MODIFIED", "done", versions[2]), ("ADDED", "pending", versions[4])],
                         everything)
        # A modify keeps the pod's creation time.
        created, names = listed("/api/v1/namespaces/w/pods", fieldSelector="status.phase!=Running")
        self.assertEqual(["w/job", "w/pending"], names)
        self.assertEqual(CREATED, created["items"][0]["metadata"]["creationTimestamp"])

    def watch_events(self, path, listed_body, count, **query):
        """The first `count` events after the list's version: (type, name, resourceVersion)."""
        events = []
        with request(path, WATCH_ACCEPT, watch=1, timeoutSeconds=5,
                     resourceVersion=listed_body["metadata"]["resourceVersion"],
                     **query) as response:
            while len(events) < count:
                line = response.readline()
                if not line:
                    break
                event = json.loads(line)
                metadata = event["object"]["metadata"]
                self.assertEqual("PartialObjectMetadata", event["object"]["kind"])
                events.append((event["type"], metadata["name"], metadata["resourceVersion"]))
        return events


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
