CREATE TABLE `hook_task` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hook_id` integer NOT NULL,
	`uuid` text NOT NULL,
	`event_type` text NOT NULL,
	`ref_name` text DEFAULT '' NOT NULL,
	`payload_content` text NOT NULL,
	`is_delivered` integer DEFAULT false NOT NULL,
	`delivered` integer DEFAULT 0 NOT NULL,
	`claimed_unix` integer DEFAULT 0 NOT NULL,
	`claim` text DEFAULT '' NOT NULL,
	`request_content` text DEFAULT '' NOT NULL,
	`response_content` text DEFAULT '' NOT NULL,
	`is_succeed` integer DEFAULT false NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `IDX_hook_task_hook_id` ON `hook_task` (`hook_id`);--> statement-breakpoint
CREATE INDEX `IDX_hook_task_pending` ON `hook_task` (`is_delivered`,`claimed_unix`);--> statement-breakpoint
CREATE INDEX `IDX_hook_task_delivered` ON `hook_task` (`is_delivered`,`delivered`);