/**
 * A subset of the Kubernetes CRI v1 API: k8s.io/cri-api, `pkg/apis/runtime/v1/api.proto` (Apache-2.0, the
 * Kubernetes Authors), package `runtime.v1`. Only the RuntimeService calls and message fields that meshcap
 * reads (the node agent, node-status) or its tests send (RunPodSandbox as kubelet does); field names and
 * numbers are the protocol's, so everything not listed is unknown to this client and skipped by protobuf.
 * Embedded as text, so the Node bundle and the self-contained executable never read a .proto at run time.
 */
export const RUNTIME_V1_PROTO = `
syntax = "proto3";
package runtime.v1;

service RuntimeService {
  rpc Version(VersionRequest) returns (VersionResponse) {}
  rpc Status(StatusRequest) returns (StatusResponse) {}
  rpc RunPodSandbox(RunPodSandboxRequest) returns (RunPodSandboxResponse) {}
  rpc StopPodSandbox(StopPodSandboxRequest) returns (StopPodSandboxResponse) {}
  rpc RemovePodSandbox(RemovePodSandboxRequest) returns (RemovePodSandboxResponse) {}
  rpc PodSandboxStatus(PodSandboxStatusRequest) returns (PodSandboxStatusResponse) {}
  rpc ListPodSandbox(ListPodSandboxRequest) returns (ListPodSandboxResponse) {}
}

message VersionRequest { string version = 1; }
message VersionResponse {
  string version = 1;
  string runtime_name = 2;
  string runtime_version = 3;
  string runtime_api_version = 4;
}

message StatusRequest { bool verbose = 1; }
message RuntimeCondition {
  string type = 1;
  bool status = 2;
  string reason = 3;
  string message = 4;
}
message RuntimeStatus { repeated RuntimeCondition conditions = 1; }
message StatusResponse {
  RuntimeStatus status = 1;
  map<string, string> info = 2;
}

enum NamespaceMode {
  POD = 0;
  CONTAINER = 1;
  NODE = 2;
  TARGET = 3;
}
message NamespaceOption {
  NamespaceMode network = 1;
  NamespaceMode pid = 2;
  NamespaceMode ipc = 3;
  string target_id = 4;
}
message LinuxSandboxSecurityContext { NamespaceOption namespace_options = 1; }
message LinuxPodSandboxConfig {
  string cgroup_parent = 1;
  LinuxSandboxSecurityContext security_context = 2;
  map<string, string> sysctls = 3;
}
message PodSandboxMetadata {
  string name = 1;
  string uid = 2;
  string namespace = 3;
  uint32 attempt = 4;
}
message PodSandboxConfig {
  PodSandboxMetadata metadata = 1;
  string hostname = 2;
  string log_directory = 3;
  map<string, string> labels = 6;
  map<string, string> annotations = 7;
  LinuxPodSandboxConfig linux = 8;
}

message RunPodSandboxRequest {
  PodSandboxConfig config = 1;
  string runtime_handler = 2;
}
message RunPodSandboxResponse { string pod_sandbox_id = 1; }
message StopPodSandboxRequest { string pod_sandbox_id = 1; }
message StopPodSandboxResponse {}
message RemovePodSandboxRequest { string pod_sandbox_id = 1; }
message RemovePodSandboxResponse {}

enum PodSandboxState {
  SANDBOX_READY = 0;
  SANDBOX_NOTREADY = 1;
}
message PodSandboxStatusRequest {
  string pod_sandbox_id = 1;
  bool verbose = 2;
}
message PodIP { string ip = 1; }
message PodSandboxNetworkStatus {
  string ip = 1;
  repeated PodIP additional_ips = 2;
}
message Namespace { NamespaceOption options = 2; }
message LinuxPodSandboxStatus { Namespace namespaces = 1; }
message PodSandboxStatus {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  PodSandboxNetworkStatus network = 5;
  LinuxPodSandboxStatus linux = 6;
  map<string, string> labels = 7;
  map<string, string> annotations = 8;
}
message PodSandboxStatusResponse {
  PodSandboxStatus status = 1;
  map<string, string> info = 2;
}

message PodSandboxStateValue { PodSandboxState state = 1; }
message PodSandboxFilter {
  string id = 1;
  PodSandboxStateValue state = 2;
}
message ListPodSandboxRequest { PodSandboxFilter filter = 1; }
message PodSandbox {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  map<string, string> labels = 5;
  map<string, string> annotations = 6;
}
message ListPodSandboxResponse { repeated PodSandbox items = 1; }
`;
