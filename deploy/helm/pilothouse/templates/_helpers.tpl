{{- define "pilothouse.fullname" -}}
{{- printf "%s-pilothouse" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "pilothouse.labels" -}}
app.kubernetes.io/name: pilothouse
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "pilothouse.databaseSecret" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecret -}}
{{- else if .Values.database.url -}}
{{- printf "%s-database" (include "pilothouse.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "pilothouse.authSecret" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "pilothouse.fullname" .)) -}}
{{- end -}}

{{/* The Deployment and Service of one agent; call with
     (dict "root" $ "name" NAME "replicas" N "env" MAP "args" LIST "keys" MAP "readyPath" P),
     where "keys" maps variable names to keys of the auth Secret and "readyPath" (default: the
     agent card) is the readiness probe's path. */}}
{{- define "pilothouse.agent" -}}
{{- $root := .root -}}
{{- $name := printf "%s-%s" (include "pilothouse.fullname" $root) .name -}}
{{- $secret := include "pilothouse.databaseSecret" $root -}}
{{- if and (gt (int .replicas) 1) (not $secret) -}}
{{- fail (printf "%s.replicas=%d needs PostgreSQL: set database.url or database.existingSecret (with SQLite each pod keeps its own conversations, approvals and tasks), or run 1 replica." .name (int .replicas)) -}}
{{- end -}}
{{- with $root.Values.database.url -}}
{{- if not (or (hasPrefix "postgresql://" .) (hasPrefix "postgres://" .)) -}}
{{- fail "database.url must be a postgresql:// URL: the chart's shared state is PostgreSQL (leave it empty for one replica on SQLite)." -}}
{{- end -}}
{{- end -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "pilothouse.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .name }}
spec:
  replicas: {{ .replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ $root.Release.Name }}
      app.kubernetes.io/component: {{ .name }}
  template:
    metadata:
      labels:
        {{- include "pilothouse.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .name }}
    spec:
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .name }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            - --agent
            - {{ .name | quote }}
            - --public-url
            - {{ printf "http://%s:%v" $name $root.Values.port | quote }}
            {{- range .args }}
            - {{ . | quote }}
            {{- end }}
          ports:
            - name: a2a
              containerPort: 8080
          env:
            - name: PILOTHOUSE_MODEL
              value: {{ $root.Values.model.name | quote }}
            {{- with $root.Values.model.maxContextTokens }}
            - name: MAX_CONTEXT_TOKENS
              value: {{ . | quote }}
            {{- end }}
            - name: PILOTHOUSE_LOG_LEVEL
              value: {{ $root.Values.logLevel | quote }}
            - name: PILOTHOUSE_HOME
              value: /data
            {{- if $secret }}
            - name: PILOTHOUSE_DATABASE_URL
              valueFrom:
                secretKeyRef:
                  name: {{ $secret }}
                  key: {{ $root.Values.database.secretKey }}
            {{- end }}
            {{- range $variable, $key := .keys }}
            - name: {{ $variable }}
              valueFrom:
                secretKeyRef:
                  name: {{ include "pilothouse.authSecret" $root }}
                  key: {{ $key }}
            {{- end }}
            {{- range $key, $value := .env }}
            - name: {{ $key }}
              value: {{ $value | quote }}
            {{- end }}
          {{- with $root.Values.credentialsSecret }}
          envFrom:
            - secretRef:
                name: {{ . }}
          {{- end }}
          readinessProbe:
            # The REST API's /readyz reads the conversation store (the database): a pod that
            # cannot reach it leaves the Service until it can.
            httpGet:
              path: {{ .readyPath | default "/.well-known/agent-card.json" }}
              port: a2a
            periodSeconds: 10
            failureThreshold: 3
          livenessProbe:
            httpGet:
              path: /.well-known/agent-card.json
              port: a2a
            initialDelaySeconds: 60
            periodSeconds: 20
          resources:
            {{- toYaml $root.Values.resources | nindent 12 }}
          volumeMounts:
            - name: data
              mountPath: /data
      volumes:
        - name: data
          emptyDir: {}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "pilothouse.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .name }}
spec:
  selector:
    app.kubernetes.io/instance: {{ $root.Release.Name }}
    app.kubernetes.io/component: {{ .name }}
  ports:
    - name: a2a
      port: {{ $root.Values.port }}
      targetPort: a2a
{{- end -}}
