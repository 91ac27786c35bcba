"""Field tables for the Kubernetes protobuf messages that kubectl 1.32 sends as request bodies.

Field numbers come from the `generated.proto` files of k8s.io/api and k8s.io/apimachinery at
v0.32 (the descriptors compiled into kubectl 1.32.4). Only the fields that typed-client creates
set are listed; the decoder skips every other field.

Each message maps a field number to `(json name, type)`. Types read like Go:

- `string`, `bytes`, `int32`, `int64`, `bool`: scalars, dropped at zero (Go `omitempty`);
- `*T`: kept at zero, because Go gives them a pointer or no `omitempty` (replicas, port, maxSurge);
- `[]T`: a repeated field; `map[string]T`: proto map entries (key 1, value 2) decoded into a dict;
- any other name: a message in `MESSAGES`; `Time`, `Quantity` and `IntOrString` are then converted
  to their JSON forms by the decoder.
"""

_META = {1: ("metadata", "ObjectMeta")}

MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    # k8s.io/apimachinery
    "Time": {1: ("seconds", "int64"), 2: ("nanos", "int32")},
    "Quantity": {1: ("string", "string")},
    "IntOrString": {1: ("type", "int64"), 2: ("intVal", "int32"), 3: ("strVal", "string")},
    "ObjectMeta": {
        1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
        4: ("selfLink", "string"), 5: ("uid", "string"), 6: ("resourceVersion", "string"),
        7: ("generation", "int64"), 8: ("creationTimestamp", "Time"),
        9: ("deletionTimestamp", "Time"), 10: ("deletionGracePeriodSeconds", "*int64"),
        11: ("labels", "map[string]string"), 12: ("annotations", "map[string]string"),
        13: ("ownerReferences", "[]OwnerReference"), 14: ("finalizers", "[]string"),
    },
    "OwnerReference": {
        5: ("apiVersion", "string"), 1: ("kind", "string"), 3: ("name", "string"),
        4: ("uid", "string"), 6: ("controller", "*bool"), 7: ("blockOwnerDeletion", "*bool"),
    },
    "LabelSelector": {
        1: ("matchLabels", "map[string]string"),
        2: ("matchExpressions", "[]LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {
        1: ("key", "string"), 2: ("operator", "string"), 3: ("values", "[]string"),
    },
    # core/v1
    "ConfigMap": {
        **_META, 2: ("data", "map[string]string"), 3: ("binaryData", "map[string]bytes"),
        4: ("immutable", "*bool"),
    },
    "Secret": {
        **_META, 2: ("data", "map[string]bytes"), 3: ("type", "string"),
        4: ("stringData", "map[string]string"), 5: ("immutable", "*bool"),
    },
    "Namespace": {**_META, 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "ServiceAccount": {
        **_META, 2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "*bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"),
        4: ("uid", "string"), 5: ("apiVersion", "string"), 6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
    "Service": {**_META, 2: ("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"), 2: ("selector", "map[string]string"),
        3: ("clusterIP", "string"), 18: ("clusterIPs", "[]string"), 4: ("type", "string"),
        5: ("externalIPs", "[]string"), 7: ("sessionAffinity", "string"),
        8: ("loadBalancerIP", "string"), 9: ("loadBalancerSourceRanges", "[]string"),
        10: ("externalName", "string"), 11: ("externalTrafficPolicy", "string"),
        12: ("healthCheckNodePort", "int32"), 13: ("publishNotReadyAddresses", "bool"),
        19: ("ipFamilies", "[]string"), 17: ("ipFamilyPolicy", "*string"),
        20: ("allocateLoadBalancerNodePorts", "*bool"), 21: ("loadBalancerClass", "*string"),
        22: ("internalTrafficPolicy", "*string"), 23: ("trafficDistribution", "*string"),
    },
    "ServicePort": {
        1: ("name", "string"), 2: ("protocol", "string"), 6: ("appProtocol", "*string"),
        3: ("port", "*int32"), 4: ("targetPort", "IntOrString"), 5: ("nodePort", "int32"),
    },
    "ResourceQuota": {**_META, 2: ("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {
        1: ("hard", "map[string]Quantity"), 2: ("scopes", "[]string"),
        3: ("scopeSelector", "ScopeSelector"),
    },
    "ScopeSelector": {1: ("matchExpressions", "[]ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: ("scopeName", "string"), 2: ("operator", "string"), 3: ("values", "[]string"),
    },
    "PodTemplateSpec": {**_META, 2: ("spec", "PodSpec")},
    "PodSpec": {
        20: ("initContainers", "[]Container"), 2: ("containers", "[]Container"),
        3: ("restartPolicy", "string"), 4: ("terminationGracePeriodSeconds", "*int64"),
        5: ("activeDeadlineSeconds", "*int64"), 6: ("dnsPolicy", "string"),
        7: ("nodeSelector", "map[string]string"), 8: ("serviceAccountName", "string"),
        9: ("serviceAccount", "string"), 21: ("automountServiceAccountToken", "*bool"),
        10: ("nodeName", "string"), 11: ("hostNetwork", "bool"), 12: ("hostPID", "bool"),
        13: ("hostIPC", "bool"), 27: ("shareProcessNamespace", "*bool"),
        14: ("securityContext", "PodSecurityContext"),
        15: ("imagePullSecrets", "[]LocalObjectReference"), 16: ("hostname", "string"),
        17: ("subdomain", "string"), 19: ("schedulerName", "string"),
        22: ("tolerations", "[]Toleration"), 24: ("priorityClassName", "string"),
        25: ("priority", "*int32"), 29: ("runtimeClassName", "*string"),
        30: ("enableServiceLinks", "*bool"), 31: ("preemptionPolicy", "*string"),
        35: ("setHostnameAsFQDN", "*bool"), 37: ("hostUsers", "*bool"),
    },
    "Container": {
        1: ("name", "string"), 2: ("image", "string"), 3: ("command", "[]string"),
        4: ("args", "[]string"), 5: ("workingDir", "string"), 6: ("ports", "[]ContainerPort"),
        7: ("env", "[]EnvVar"), 8: ("resources", "ResourceRequirements"),
        24: ("restartPolicy", "*string"), 9: ("volumeMounts", "[]VolumeMount"),
        13: ("terminationMessagePath", "string"), 20: ("terminationMessagePolicy", "string"),
        14: ("imagePullPolicy", "string"), 15: ("securityContext", "SecurityContext"),
        16: ("stdin", "bool"), 17: ("stdinOnce", "bool"), 18: ("tty", "bool"),
    },
    "ContainerPort": {
        1: ("name", "string"), 2: ("hostPort", "int32"), 3: ("containerPort", "*int32"),
        4: ("protocol", "string"), 5: ("hostIP", "string"),
    },
    "EnvVar": {1: ("name", "string"), 2: ("value", "string")},
    "ResourceRequirements": {
        1: ("limits", "map[string]Quantity"), 2: ("requests", "map[string]Quantity"),
    },
    "VolumeMount": {
        1: ("name", "string"), 2: ("readOnly", "bool"), 3: ("mountPath", "string"),
        4: ("subPath", "string"), 5: ("mountPropagation", "*string"), 6: ("subPathExpr", "string"),
    },
    "SecurityContext": {
        1: ("capabilities", "Capabilities"), 2: ("privileged", "*bool"),
        4: ("runAsUser", "*int64"), 8: ("runAsGroup", "*int64"), 5: ("runAsNonRoot", "*bool"),
        6: ("readOnlyRootFilesystem", "*bool"), 7: ("allowPrivilegeEscalation", "*bool"),
        9: ("procMount", "*string"),
    },
    "Capabilities": {1: ("add", "[]string"), 2: ("drop", "[]string")},
    "PodSecurityContext": {
        2: ("runAsUser", "*int64"), 6: ("runAsGroup", "*int64"), 3: ("runAsNonRoot", "*bool"),
        4: ("supplementalGroups", "[]int64"), 5: ("fsGroup", "*int64"),
    },
    "Toleration": {
        1: ("key", "string"), 2: ("operator", "string"), 3: ("value", "string"),
        4: ("effect", "string"), 5: ("tolerationSeconds", "*int64"),
    },
    # apps/v1
    "Deployment": {**_META, 2: ("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: ("replicas", "*int32"), 2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"), 4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int32"), 6: ("revisionHistoryLimit", "*int32"),
        7: ("paused", "bool"), 9: ("progressDeadlineSeconds", "*int32"),
    },
    "DeploymentStrategy": {1: ("type", "string"), 2: ("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {
        1: ("maxUnavailable", "*IntOrString"), 2: ("maxSurge", "*IntOrString"),
    },
    # batch/v1
    "Job": {**_META, 2: ("spec", "JobSpec")},
    "JobSpec": {
        1: ("parallelism", "*int32"), 2: ("completions", "*int32"),
        3: ("activeDeadlineSeconds", "*int64"), 7: ("backoffLimit", "*int32"),
        12: ("backoffLimitPerIndex", "*int32"), 13: ("maxFailedIndexes", "*int32"),
        4: ("selector", "LabelSelector"), 5: ("manualSelector", "*bool"),
        6: ("template", "PodTemplateSpec"), 8: ("ttlSecondsAfterFinished", "*int32"),
        9: ("completionMode", "*string"), 10: ("suspend", "*bool"),
        14: ("podReplacementPolicy", "*string"), 15: ("managedBy", "*string"),
    },
    "CronJob": {**_META, 2: ("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: ("schedule", "string"), 8: ("timeZone", "*string"),
        2: ("startingDeadlineSeconds", "*int64"), 3: ("concurrencyPolicy", "string"),
        4: ("suspend", "*bool"), 5: ("jobTemplate", "JobTemplateSpec"),
        6: ("successfulJobsHistoryLimit", "*int32"), 7: ("failedJobsHistoryLimit", "*int32"),
    },
    "JobTemplateSpec": {**_META, 2: ("spec", "JobSpec")},
    # policy/v1, scheduling.k8s.io/v1
    "PodDisruptionBudget": {**_META, 2: ("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {
        1: ("minAvailable", "*IntOrString"), 2: ("selector", "LabelSelector"),
        3: ("maxUnavailable", "*IntOrString"), 4: ("unhealthyPodEvictionPolicy", "*string"),
    },
    "PriorityClass": {
        **_META, 2: ("value", "*int32"), 3: ("globalDefault", "bool"),
        4: ("description", "string"), 5: ("preemptionPolicy", "*string"),
    },
    # rbac.authorization.k8s.io/v1
    "Role": {**_META, 2: ("rules", "[]PolicyRule")},
    "ClusterRole": {
        **_META, 2: ("rules", "[]PolicyRule"), 3: ("aggregationRule", "AggregationRule"),
    },
    "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
    "PolicyRule": {
        1: ("verbs", "[]string"), 2: ("apiGroups", "[]string"), 3: ("resources", "[]string"),
        4: ("resourceNames", "[]string"), 5: ("nonResourceURLs", "[]string"),
    },
    "RoleBinding": {**_META, 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {
        1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"),
        4: ("namespace", "string"),
    },
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
    # authorization.k8s.io/v1 (status is the server's to fill, so it is not decoded)
    "SelfSubjectAccessReview": {**_META, 2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
        4: ("version", "string"), 5: ("resource", "string"), 6: ("subresource", "string"),
        7: ("name", "string"),
    },
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SelfSubjectRulesReview": {**_META, 2: ("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
    # authentication.k8s.io/v1
    "SelfSubjectReview": {**_META},
    "TokenRequest": {**_META, 2: ("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {
        1: ("audiences", "[]string"), 4: ("expirationSeconds", "*int64"),
        3: ("boundObjectRef", "BoundObjectReference"),
    },
    "BoundObjectReference": {
        1: ("kind", "string"), 2: ("apiVersion", "string"), 3: ("name", "string"),
        4: ("uid", "string"),
    },
}
MESSAGES["ClusterRoleBinding"] = MESSAGES["RoleBinding"]

# (apiVersion, kind) from the envelope's typeMeta -> top-level message in MESSAGES.
KINDS: dict[tuple[str, str], str] = {
    **{("v1", kind): kind for kind in (
        "ConfigMap", "Secret", "Namespace", "Service", "ServiceAccount", "ResourceQuota")},
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    **{("rbac.authorization.k8s.io/v1", kind): kind for kind in (
        "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authentication.k8s.io/v1beta1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
}
